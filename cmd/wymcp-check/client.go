package main

import (
	"fmt"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/proxy"
	"github.com/wymcp/wymcp-check/schema"
	"github.com/wymcp/wymcp-check/transcript"
)

// A clientJudge judges the client's messages of one relay run, or of one
// recording lint replays. Both feed it the same events, in the relay's
// order, as transcript.Traffic values (the form --record writes them
// in): each client message is judged against the session the events
// before it built, then taken into it.
type clientJudge struct {
	tracker *checks.ClientTracker
	schemas checks.ClientSchemaValidator
	list    []*checks.Check
}

// newClientJudge judges with the client-side schemas of --schema builtin;
// any other value turns them off (a --schema FILE describes replies).
func newClientJudge(schemaFlag string, list []*checks.Check) *clientJudge {
	j := &clientJudge{tracker: checks.NewClientTracker(), list: list}
	if schemaFlag == "builtin" || schemaFlag == "" {
		j.schemas = checks.ClientSchemas(schema.NewClientRegistry())
	}
	return j
}

// take takes in one event; for a client message it returns the verdicts,
// judged with the facts the server had declared by then.
func (j *clientJudge) take(t *transcript.Traffic, facts *expect.Facts) []checks.Verdict {
	switch t.Kind {
	case transcript.TrafficClient:
		m := &checks.ClientMessage{Seq: t.Seq, Transport: t.Transport, HTTPMethod: t.Method, Header: t.Header, Body: t.Body}
		vs := checks.JudgeClient(checks.ClientInput{Fixture: t.Fixture, Message: m, View: j.tracker.View(m), Facts: facts, Schemas: j.schemas}, j.list)
		j.tracker.Client(m)
		return vs
	case transcript.TrafficRequest:
		j.tracker.Server(&checks.ServerRequest{Seq: t.Seq, On: t.On, Body: t.Body})
	case transcript.TrafficClosed:
		j.tracker.Close(&checks.Closed{Request: t.Request, Status: t.Status, SessionID: t.SessionID, Answer: t.Body})
	case transcript.TrafficLost:
		j.tracker.Lost(t.Lost)
	}
	return nil
}

// clientTraffic is the event of a message the client sent, nil when it
// is not judged: traffic off the MCP endpoint (OAuth discovery), and a
// message over the byte bound (only its beginning was kept).
func clientTraffic(o *proxy.Observation) *transcript.Traffic {
	if o.Oversized || (o.HTTP != nil && !o.HTTP.Endpoint) {
		return nil
	}
	t := &transcript.Traffic{Kind: transcript.TrafficClient, Seq: o.Seq, Fixture: clientName(o), Transport: envelope.Stdio, Body: o.Raw}
	if h := o.HTTP; h != nil {
		t.Transport, t.Method, t.Header = envelope.HTTP, h.Method, h.Header
	}
	if t.Body == nil {
		t.Body = []byte{}
	}
	return t
}

// clientName names a client message's verdicts in reports: its place in
// the order and what it is.
func clientName(o *proxy.Observation) string {
	what := o.Method
	switch {
	case o.Kind == proxy.KindResponse:
		what = "response"
	case what == "" && o.HTTP != nil && len(o.Raw) == 0:
		what = o.HTTP.Method
	case what == "":
		what = "message"
	}
	return fmt.Sprintf("client #%d %s", o.Seq, what)
}

// serverRequestTraffic is the event of a request the server sent, or a
// batch (its requests are taken in member by member; a batch of
// responses adds none), or a message that is none (no JSON-RPC message:
// a client may refuse it with id null, review rev90).
func serverRequestTraffic(o *proxy.Observation) *transcript.Traffic {
	switch {
	case o.Kind != proxy.KindRequest && o.Kind != proxy.KindBatch && o.Kind != proxy.KindOther:
		return nil
	case o.Oversized:
		// Only its beginning was kept: its id and token are not known,
		// so the session is no longer seen whole, and what answers or
		// follows it is not judged as answering nothing (review rev58).
		return &transcript.Traffic{Kind: transcript.TrafficLost, Lost: 1}
	}
	t := &transcript.Traffic{Kind: transcript.TrafficRequest, Seq: o.Seq, Transport: envelope.Stdio, Body: o.Raw}
	if o.HTTP != nil {
		t.Transport, t.On = envelope.HTTP, o.HTTP.Request
	}
	return t
}

// answeredTraffic is the end of a client request's exchange that its
// answer makes, before the exchange is judged (an HTTP stream is read on
// past it; a stdio request that offered a progress token waits for late
// progress); nil when o is none.
func answeredTraffic(o *proxy.Observation) *transcript.Traffic {
	if o.Kind != proxy.KindResponse && o.Kind != proxy.KindBatch {
		return nil
	}
	var t *transcript.Traffic
	switch h := o.HTTP; {
	case h != nil:
		t = &transcript.Traffic{Kind: transcript.TrafficClosed, Transport: envelope.HTTP, Request: h.Request,
			Status: h.Status, SessionID: envelope.HeaderGet(h.Header, "Mcp-Session-Id")}
	case o.Answers != 0:
		// On stdio too (review rev57: a request that offered a progress
		// token stayed open for the judge while its pair waited for late
		// progress, and its token's or id's reuse by the next request,
		// sent once the client had the answer, failed CLI1003).
		t = &transcript.Traffic{Kind: transcript.TrafficClosed, Transport: envelope.Stdio, Request: o.Answers}
	default:
		return nil
	}
	if o.Kind == proxy.KindResponse && !o.Oversized {
		t.Body = o.Raw
	}
	return t
}

// closedTraffic is the end of a client request's exchange; reply is the
// message that answered it, nil when none did.
func closedTraffic(p proxy.Pair, reply *proxy.Observation) *transcript.Traffic {
	ex := p.Exchange
	t := &transcript.Traffic{Kind: transcript.TrafficClosed, Transport: ex.Transport, Request: p.RequestSeq}
	if r := ex.Response; r != nil && ex.Transport == envelope.HTTP {
		t.Status, t.SessionID = r.Status, envelope.HeaderGet(r.Header, "Mcp-Session-Id")
	}
	if reply != nil && reply.Kind == proxy.KindResponse && !reply.Oversized {
		t.Body = reply.Raw
	}
	return t
}
