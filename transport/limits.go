package transport

import (
	"math"
	"time"
)

// Default limits, used for every Limits field left zero.
const (
	DefaultTimeout   = 10 * time.Second
	DefaultMaxBytes  = 4 << 20
	DefaultMaxEvents = 1000
	DefaultQuiet     = 300 * time.Millisecond
	DefaultGrace     = 2 * time.Second
	DefaultStart     = 30 * time.Second
	DefaultExit      = 5 * time.Second
)

// Limits bound every exchange so a hostile server can never hang, flood or
// crash the checker. A zero (or negative) field takes its default.
type Limits struct {
	// Timeout bounds one exchange, from sending the request to the end of
	// the reply. On stdio, the first message to a server just started is
	// timed from when the server has read it (see Start).
	Timeout time.Duration
	// Start bounds how long a stdio server just started may take to read
	// its first message (behind npx, uvx or a shell, seconds can pass
	// before the server reads anything). Its start-up does not count
	// against Timeout, which would otherwise judge a slow start as
	// silence and let a notification's quiet moment pass before the
	// server could have answered it. Only where the read can be seen
	// (Linux), and only the server's own: a wrapper that reads stdin for
	// it (docker run -i, ssh) ends the wait at once.
	Start time.Duration
	// MaxBytes bounds the reply bytes read per exchange. Beyond it the
	// transport stops reading, sets Response.Truncated and reports
	// "reply exceeds N bytes".
	MaxBytes int64
	// MaxEvents bounds the SSE events (HTTP) or lines (stdio) read per
	// exchange.
	MaxEvents int
	// Quiet is how long a stdio exchange for a notification waits for a
	// reply that should not come, and how long an HTTP request's event
	// stream is read on past its response for what the server still
	// sends there.
	Quiet time.Duration
	// Hurry, once closed, cuts each of Stdio.Close's waits to HurryGrace
	// (the run is out of time: its deadline passed, or it was
	// interrupted), so a server that ignores its stdin's end and SIGTERM
	// holds the reports back a moment, not two grace periods.
	Hurry <-chan struct{}
	// Grace is how long Stdio.Close waits at each shutdown step: after
	// closing stdin, after SIGTERM.
	Grace time.Duration
	// Exit is how long Stdio.EndInput waits for the server to exit once
	// its stdin closed, at least Grace: T-STDIO-6's "promptly", which the
	// digest's test gives as "e.g. 5 s" (a server gone after 3 s was
	// warned when the wait was the 2 s grace; review rev50).
	Exit time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	// One byte of headroom is read to detect overflow; keep that in an int.
	l.MaxBytes = min(l.MaxBytes, math.MaxInt32-1)
	if l.MaxEvents <= 0 {
		l.MaxEvents = DefaultMaxEvents
	}
	if l.Quiet <= 0 {
		l.Quiet = DefaultQuiet
	}
	if l.Grace <= 0 {
		l.Grace = DefaultGrace
	}
	if l.Start <= 0 {
		l.Start = DefaultStart
	}
	if l.Exit <= 0 {
		l.Exit = DefaultExit
	}
	l.Exit = max(l.Exit, l.Grace)
	return l
}
