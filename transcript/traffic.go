package transcript

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// A relay (proxy, wrap) also records its traffic as it passed, one
// {"traffic":{…}} line per event, in the relay's order: every message the
// client sent, every request the server sent, the end of each client
// request's exchange, and messages the relay's output lost. lint replays
// them to judge the client's messages against the same history the relay
// judged them with; exchange lines stay as they are, for the server's
// replies.

// Traffic kinds.
const (
	TrafficClient  = "client"  // a message the client sent
	TrafficRequest = "request" // a request the server sent
	TrafficClosed  = "closed"  // a client request's exchange ended
	TrafficLost    = "lost"    // messages not observed
)

// A Traffic line is one event of a relay's traffic.
type Traffic struct {
	Kind string
	// Seq is the event's place in the relay's order (client, request).
	Seq uint64
	// Fixture names a client message's verdicts in reports.
	Fixture   string
	Transport string
	// Method and Header are a client's HTTP request's (secrets redacted).
	Method string
	Header http.Header
	// On is the client request whose HTTP reply carried a server request.
	On uint64
	// Request is the client request a closed event ends; Status and
	// SessionID are its HTTP reply's status and Mcp-Session-Id.
	Request   uint64
	Status    int
	SessionID string
	// Body is the message: the client's, the server's request, or the
	// answer that closed the exchange (nil: none).
	Body []byte
	// Lost counts the messages not observed.
	Lost int64
}

type wireTraffic struct {
	Kind       string              `json:"kind"`
	Seq        uint64              `json:"seq,omitempty"`
	Fixture    string              `json:"fixture,omitempty"`
	Transport  string              `json:"transport,omitempty"`
	Method     string              `json:"method,omitempty"`
	Headers    map[string][]string `json:"headers,omitempty"`
	On         uint64              `json:"on,omitempty"`
	Request    uint64              `json:"request,omitempty"`
	Status     int                 `json:"status,omitempty"`
	SessionID  string              `json:"sessionId,omitempty"`
	Body       *string             `json:"body,omitempty"`
	BodyBase64 *string             `json:"bodyBase64,omitempty"`
	Lost       int64               `json:"lost,omitempty"`
}

// WriteTraffic appends one traffic line.
func WriteTraffic(w io.Writer, t *Traffic) error {
	wt := wireTraffic{Kind: t.Kind, Seq: t.Seq, Fixture: t.Fixture, Transport: t.Transport, Method: t.Method,
		Headers: t.Header, On: t.On, Request: t.Request, Status: t.Status, SessionID: t.SessionID, Lost: t.Lost}
	if t.Body != nil {
		s := string(t.Body)
		if utf8.Valid(t.Body) {
			wt.Body = &s
		} else {
			e := base64.StdEncoding.EncodeToString(t.Body)
			wt.BodyBase64 = &e
		}
	}
	return writeLine(w, struct {
		Traffic wireTraffic `json:"traffic"`
	}{wt})
}

// trafficLine reads a {"traffic":{…}} line; ok is false for any other.
func trafficLine(line []byte) (*Traffic, bool, error) {
	if lineKind(line) != "traffic" {
		return nil, false, nil
	}
	if envelope.TooDeep(line) || !gjson.ValidBytes(line) {
		return nil, true, errors.New("traffic line is not valid JSON")
	}
	v := gjson.GetBytes(line, "traffic")
	if !v.IsObject() {
		return nil, true, errors.New(`"traffic" must be an object`)
	}
	if err := kindLine(line, "traffic"); err != nil {
		return nil, true, err
	}
	var m [13]gjson.Result
	envelope.Members(v, []string{"kind", "seq", "fixture", "transport", "method", "headers", "on", "request", "status", "sessionId", "body", "bodyBase64", "lost"}, m[:])
	t := &Traffic{Kind: m[0].Str, Fixture: m[2].Str, Method: m[4].Str, SessionID: m[9].Str}
	switch t.Kind {
	case TrafficClient, TrafficRequest, TrafficClosed, TrafficLost:
	default:
		return nil, true, fmt.Errorf(`"traffic.kind" is %s, want one of client, request, closed, lost`, m[0].Raw)
	}
	var lost uint64
	for _, f := range []struct {
		v   gjson.Result
		dst *uint64
	}{{m[1], &t.Seq}, {m[6], &t.On}, {m[7], &t.Request}, {m[12], &lost}} {
		if !f.v.Exists() {
			continue
		}
		if f.v.Type != gjson.Number || !envelope.IsInteger(f.v.Raw) || f.v.Num < 0 {
			return nil, true, fmt.Errorf(`"traffic" numbers must be non-negative integers, not %s`, f.v.Raw)
		}
		*f.dst = f.v.Uint()
	}
	switch tr := m[3].Str; {
	case !m[3].Exists() && t.Kind == TrafficLost:
	case tr == envelope.HTTP || tr == envelope.Stdio:
		t.Transport = tr
	default:
		return nil, true, fmt.Errorf(`"traffic.transport" is %s, want "http" or "stdio"`, m[3].Raw)
	}
	t.Status, t.Lost = int(m[8].Int()), int64(min(lost, 1<<62))
	var err error
	if m[5].Exists() {
		if t.Header, err = headers(m[5].Raw, "traffic", nil); err != nil {
			return nil, true, err
		}
	}
	if t.Body, err = body(m[10].Raw, m[11].Raw, "traffic"); err != nil {
		return nil, true, err
	}
	return t, true, nil
}
