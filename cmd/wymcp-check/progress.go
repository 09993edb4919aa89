package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// A progress line tells a person at a terminal how far a live run is:
// fixtures done of the total, and the slowest exchange still in flight.
// It is redrawn in place on stderr, at most every progressEvery, and
// erased when the run ends; it is never drawn when stderr is not a
// terminal or CI is set (a log gains nothing from it).
type progress struct {
	w     io.Writer
	now   func() time.Time
	total int

	mu       sync.Mutex
	done     int
	inFlight map[string]time.Time // exchange → when it started
	drawn    time.Time
	width    int // of the line on screen, to erase it
}

// progressEvery bounds how often the line is redrawn.
const progressEvery = 100 * time.Millisecond

// newProgress returns nil (no line) unless stderr is a terminal outside CI.
func newProgress(s *streams, total int) *progress {
	if !s.ErrTTY || s.Getenv("CI") != "" {
		return nil
	}
	return &progress{w: s.ErrOut, now: s.Now, total: total, inFlight: map[string]time.Time{}}
}

// Started and Finished track one fixture; both are safe on a nil
// progress.
func (p *progress) Started(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inFlight[name] = p.now()
	p.draw(false)
}

func (p *progress) Finished(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.inFlight, name)
	p.done++
	p.draw(false)
}

// end erases the line.
func (p *progress) end() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.width > 0 {
		fmt.Fprintf(p.w, "\r%*s\r", p.width, "")
		p.width = 0
	}
}

func (p *progress) draw(force bool) {
	now := p.now()
	if !force && now.Sub(p.drawn) < progressEvery && p.done < p.total {
		return
	}
	p.drawn = now
	line := fmt.Sprintf("%d/%d fixtures", p.done, p.total)
	slowest, since := "", now
	for name, t := range p.inFlight {
		if t.Before(since) || t.Equal(since) && name < slowest {
			slowest, since = name, t
		}
	}
	if slowest != "" {
		line += fmt.Sprintf(", slowest in flight: %s (%s)", slowest, now.Sub(since).Round(100*time.Millisecond))
	}
	pad := max(p.width-len(line), 0)
	fmt.Fprintf(p.w, "\r%s%*s", line, pad, "")
	p.width = len(line)
}
