// Package proxy relays live MCP traffic between a real client and a real
// server and observes it, so that both directions can be judged as they
// flow: HTTP is a Streamable HTTP reverse proxy, Stdio starts a server
// command and relays its stdin and stdout.
//
// A relay only moves bytes and watches them. Every byte goes on unchanged
// and at once: a request body, a JSON reply, each SSE event, each stdio
// line is forwarded (and flushed) before it is observed, and nothing is
// re-encoded. A reply the server compressed (Content-Encoding gzip,
// x-gzip or deflate, for a client that asked) goes on compressed; it is
// observed and judged decoded, as the client reads it, event by event as
// the coded bytes pass, and a body that decodes past Limits.MaxBytes is
// not judged, as an oversized one is not. What it sees it hands to an Observer: an Observation per
// message in each direction, and a Pair per request matched with its
// reply (the client's requests with the server's replies, and the
// server's own requests with the client's responses).
//
// Over HTTP a POST answered with an event stream is judged as check
// judges it: the stream is read on past its response until it ends, or
// Limits.Quiet after the response, or a bound (Limits.MaxBytes of text,
// transport.DefaultMaxEvents events from the stream's start), and what
// came meanwhile (progress, a second response) is judged with the
// exchange; the Pair comes then, and the response's Observation says so
// (Later). Its response is the message check's transport waits for
// (transport.Answers): a response to another request's id is no answer,
// but a message of the exchange, and the stream is read on for the
// request's own, as check reads it. A stream that meets a bound before its response is paired
// there, Response.Truncated, with check's failure: the messages that came
// whole before the bound are judged, and the response it withheld is
// "could not judge", as check judges it. Its Response records how the stream
// ended as check's transport does: Ended when the server closed it and
// it was read to its end (for a stream the client resumed, the last
// GET's stream), HeldOpen when Limits.Quiet passed first. A GET stream's exchange is paired at its
// head; each notification or request the server sends on it later is
// judged as an exchange of its own (a Tail pair: the GET, the stream's
// head, that event alone), up to the same bounds per stream.
//
// A relay never waits for its Observer. Observations go through a queue
// bounded in count and bytes; when the Observer falls behind (a slow
// judge, a terminal nobody reads) the newest are dropped and counted,
// and the traffic does not slow down. A side that floods, hangs or dies
// never makes a relay buffer without bound or hang the other side:
// forwarding is a copy with the peers' own back-pressure, and what is
// kept for observation is cut at Limits.MaxBytes per message.
//
// Secrets stay out of observations: the client's Authorization (and
// Cookie, Proxy-Authorization) and the headers the user adds are replaced
// by "<redacted>" in every header an Observer sees, and Redactor.Scrub
// removes their values from bodies before anything is printed or
// recorded.
package proxy
