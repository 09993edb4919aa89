package checks

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
)

var MethodResults = &Check{
	ID:       "PRO1008",
	Title:    "A result keeps the rules of the method it answers",
	SpecRef:  "T-RES-2, T-COMP-1, T-LIFE-5, T-STDIO-8, T-LIFE-17, T-CACHE-3, T-PAGE-3",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `What a result may carry depends on the method and the request:

- resources/read of a URI the server neither lists nor matches with a
  template is never answered with empty contents in 2026-07-28 (T-RES-2);
  a content item carries text or blob, and one with both warns (T-RES-4:
  schema.ts types it as one or the other, while the JSON Schema's anyOf
  accepts both).
- completion/complete answers at most 100 values (T-COMP-1).
- A 2025-xx ping gets an empty result: _meta alone (T-LIFE-5). The
  built-in schema closes it too; the official schema, under --schema
  FILE, leaves it open.
- A later page of a 2026-07-28 list keeps the cacheScope of its first
  page (T-CACHE-3; ttlMs may differ), where the run followed the pages
  or the traffic showed them.
- A later page that hands out a nextCursor an earlier page of its
  listing handed out sends a client round without end: it warns, as
  cursors are to be stable (T-PAGE-3, a SHOULD). A cursor another
  listing handed out is no loop: cursors are opaque, and a stateless
  server may give every listing the same offsets.
- In 2025-11-25, a server that declared no task-augmented tools/call
  processes a task-augmented call normally: a CreateTaskResult from it
  fails (the tasks page, Task Support and Handling); and the task a
  tasks/get or tasks/cancel result names, and the related-task _meta of
  a tasks/result result, is the one the request's taskId names (the
  tasks page: the request's taskId is the source of truth); a
  CreateTaskResult's related-task _meta names the task it creates (a
  MUST), and a tasks/get, tasks/list or tasks/cancel result that
  carries one warns (a SHOULD NOT: it names its tasks itself). A plain
  result for a task-augmented call of a tool that takes tasks, from a
  server that declares task-augmented tools/call, warns (an accepted
  task is answered with a CreateTaskResult; whether the server may
  decline is not said). A task's createdAt and lastUpdatedAt are ISO
  8601 timestamps (a MUST of the tasks page): a value that is none
  fails, an ISO 8601 form RFC 3339 leaves out (no offset) warns.
- The keys of capabilities.extensions (2026-07-28) follow the _meta key
  grammar with a prefix that is not optional: "io.example/tasks", never
  "tasks" (T-LIFE-17).
- In 2026-07-28 the server sends notifications/cancelled only to end a
  subscriptions/listen stream, so none arrives on another request's
  stream (T-STDIO-8); on stdio, whose stdout every exchange shares, one
  naming another request is that listen stream's when tagged with a
  subscriptionId, and warns untagged (AMB-20); where the run knew the
  listen requests sent on the pipe (check, send and wrap, and the
  "listens" of their transcripts), one naming none of them fails: it
  can end no listen stream. Inside a stdio listen exchange the same
  holds for a cancellation naming another request and not tagged with
  the exchange's own subscriptionId (PRO1009 judges what is tagged).

An input_required result and a 2026-07-28 result's serverInfo are
PRO1002's to judge.`,
	Run: func(p *Pass) error {
		x := p.Expect
		judged := false
		if x.Version == envelope.V20260728 {
			for i, m := range p.Reply.Messages {
				if !m.IsObject() || m.Get("method").Str != "notifications/cancelled" {
					continue
				}
				rid := m.Get("params.requestId")
				if x.Method == "subscriptions/listen" {
					// PRO1009 judges what a listen stream carries, but on
					// stdio only what is tagged with its subscriptionId:
					// the rest is judged here as on any other exchange.
					if p.Exchange.Transport != envelope.Stdio || ownTag(x.Request.Get("id"), m) ||
						(rid.Type != gjson.String && rid.Type != gjson.Number) || envelope.SameID(rid, x.Request.Get("id")) {
						continue
					}
				}
				if p.Exchange.Transport == envelope.Stdio && (rid.Type == gjson.String || rid.Type == gjson.Number) &&
					!envelope.SameID(rid, x.Request.Get("id")) {
					// stdout is shared: this may end a listen stream another
					// exchange opened (T-STDIO-8), which this one cannot see.
					// Tagged with its subscriptionId it surely does; untagged
					// it may too (AMB-20), so it only warns.
					ex := p.Exchange
					if ex.Offered != nil && ex.Listens != nil && !slices.ContainsFunc(ex.Listens, func(l string) bool { return envelope.SameID(gjson.Parse(l), rid) }) {
						// No listen request on the pipe has that id:
						// there is no listen stream it could end.
						judged = true
						p.Failf(msgPath(p, i), "notifications/cancelled naming request %s, which opened no listen stream on the pipe; in 2026-07-28 it only ends a subscriptions/listen stream (T-STDIO-8)", clip(rid.Raw))
						continue
					}
					if !m.Get(envelope.JoinPath("params._meta", envelope.MetaSubscriptionID)).Exists() {
						judged = true
						p.Warnf(msgPath(p, i), "notifications/cancelled naming another request without a subscriptionId: on stdio it may end a listen stream another exchange opened (AMB-20), or cancel what 2026-07-28 never cancels (T-STDIO-8)")
					}
					continue
				}
				judged = true
				p.Failf(msgPath(p, i), "notifications/cancelled from the server on a %s stream; in 2026-07-28 it only ends a subscriptions/listen stream (T-STDIO-8)", Quote(x.Method, quoteN))
			}
		}
		m, err := needObject(p)
		if err != nil {
			if judged {
				return nil
			}
			return err
		}
		r := m.Get("result")
		if !r.IsObject() {
			if judged {
				return nil
			}
			return Skip("the reply is not a result object")
		}
		if x.Method == "resources/read" {
			judged = true
			for i, c := range r.Get("contents").Array() {
				if c.Get("text").Exists() && c.Get("blob").Exists() {
					// schema.ts types an item as text or blob; its JSON
					// Schema's anyOf accepts both at once, so only warns.
					p.Warnf(fmt.Sprintf("result.contents.%d", i), "a content item carries both text and blob; T-RES-4 gives an item one of them, and clients read such an item either way")
				}
			}
		}
		if x.Page.Scope != "" && x.Version == envelope.V20260728 {
			judged = true
			if s := r.Get("cacheScope"); s.Type == gjson.String && s.Str != x.Page.Scope {
				p.Failf("result.cacheScope", "cacheScope is %s on a later page, %s on the first; every page of one list keeps one (T-CACHE-3)", Quote(s.Str, quoteN), Quote(x.Page.Scope, quoteN))
			}
		}
		if len(x.Page.Cursors) > 0 {
			// A cursor is opaque and may be reused by another listing, so
			// only one this listing handed out already is known to loop;
			// "stable" cursors are a SHOULD.
			judged = true
			if c := r.Get("nextCursor"); c.Type == gjson.String && slices.Contains(x.Page.Cursors, c.Str) {
				p.Warnf("result.nextCursor", "nextCursor %s is one an earlier page of this listing handed out: a client following the pages goes round without end (T-PAGE-3)", Quote(c.Str, quoteN))
			}
		}
		switch {
		case x.Method == "resources/read" && x.EmptyContents.Set():
			judged = true
			if c := r.Get("contents"); c.IsArray() && len(c.Array()) == 0 {
				p.Deviate(x.EmptyContents, "result.contents", "empty contents for a URI the checker made up; a missing resource is an error, never an empty result (T-RES-2)")
			}
		case x.Method == "ping" && x.Version != envelope.V20260728:
			// The built-in schema closes EmptyResult; the official one
			// leaves it open, so under --schema FILE only this judges it.
			judged = true
			r.ForEach(func(k, _ gjson.Result) bool {
				if k.Str != "_meta" {
					p.Failf(envelope.JoinPath("result", k.Str), "ping gets an empty result, and this one holds %s (T-LIFE-5)", Quote(k.Str, quoteN))
				}
				return true
			})
		case x.Method == "completion/complete":
			judged = true
			if n := len(r.Get("completion.values").Array()); n > 100 {
				p.Failf("result.completion.values", "%d completion values; at most 100 are allowed (T-COMP-1)", n)
			}
		case x.Method == "tools/call" && x.Version == envelope.V20251125 && envelope.AsksTask(&x.Request) && r.Get("content").Exists() && !r.Get("task").Exists() &&
			r.Get("isError").Type != gjson.True && (x.Tool == nil || !x.Tool.Refusal.Set()):
			// (A refusal, as a result with isError, creates no task: an
			// argument the schema forbids is refused so, AMB-2; review
			// rev50.)
			// A task the server accepts is answered with a CreateTaskResult
			// (the tasks page, Result Retrieval); whether a server that
			// declares task-augmented calls, of a tool that takes tasks,
			// may decline and serve the call normally is not said: a
			// warning (review rev49).
			t := x.Facts.Tool(x.Request.Get("params.name").Str)
			if declared, known := x.Facts.Declares("tasks.requests.tools.call"); known && declared && t != nil {
				if support := gjson.GetBytes(t.Raw, "execution.taskSupport").Str; support == "optional" || support == "required" {
					judged = true
					p.Warnf("result", "a task-augmented call of tool %s (taskSupport %s) answered with its result, not a CreateTaskResult, by a server that declares task-augmented tools/call: a receiver that accepts a task returns a CreateTaskResult (the tasks page, Result Retrieval), and a requestor waiting for one may reject this", Quote(t.Name, quoteN), Quote(support, quoteN))
				}
			}
		case x.Method == "tools/call" && x.Version == envelope.V20251125 && envelope.CreatedTask(&x.Request, r):
			// "Receivers that do not declare the task capability for a
			// request type MUST process requests of that type normally,
			// ignoring any task-augmentation metadata" (the tasks page,
			// Task Support and Handling): known from the server's own
			// declaration (review rev49).
			judged = true
			taskTimes(p, "result.task", r.Get("task"))
			if created := r.Get("task.taskId"); created.Type == gjson.String {
				// The result names its task twice (review rev80).
				relatedTaskIs(p, r, created.Str, "the task created")
			}
			if declared, known := x.Facts.Declares("tasks.requests.tools.call"); known && !declared {
				p.Failf("result.task", "the server created a task for tools/call, though it declared no task-augmented tools/call (tasks.requests.tools.call): it processes such a call normally, ignoring the task (the tasks page, Task Support and Handling)")
			}
		case x.Version == envelope.V20251125 && (x.Method == "tasks/get" || x.Method == "tasks/cancel" || x.Method == "tasks/result") && x.Request.Get("params.taskId").Type == gjson.String:
			// The request's taskId is the source of truth for the task
			// meant, and a related-task _meta names that task (the tasks
			// page, Associating Task-Related Messages; review rev49).
			judged = true
			if x.Method != "tasks/result" {
				taskTimes(p, "result", r)
			}
			asked := x.Request.Get("params.taskId").Str
			path, got := "result.taskId", r.Get("taskId")
			if x.Method == "tasks/result" {
				path = envelope.JoinPath("result._meta", envelope.MetaRelatedTask) + ".taskId"
				got = r.Get(envelope.JoinPath("_meta", envelope.MetaRelatedTask) + ".taskId")
			}
			if got.Type == gjson.String && got.Str != asked {
				p.Failf(path, "the result names task %s, the request task %s: the request's taskId is the source of truth for the task meant (the tasks page, Associating Task-Related Messages)", Quote(got.Str, quoteN), Quote(asked, quoteN))
			}
			if x.Method != "tasks/result" {
				relatedTaskUnasked(p, r)
				relatedTaskIs(p, r, asked, "the request task")
			}
		case x.Method == "tasks/list" && x.Version == envelope.V20251125:
			judged = true
			relatedTaskUnasked(p, r)
			for i, t := range r.Get("tasks").Array() {
				taskTimes(p, fmt.Sprintf("result.tasks.%d", i), t)
			}
		case x.Version == envelope.V20260728 && r.Get("capabilities.extensions").IsObject():
			judged = true
			r.Get("capabilities.extensions").ForEach(func(k, _ gjson.Result) bool {
				if prefix, _, ok := strings.Cut(k.Str, "/"); !ok || prefix == "" || !metaKeyRE.MatchString(k.Str) {
					p.Failf(envelope.JoinPath("result.capabilities.extensions", k.Str), "extension key %s is no prefixed _meta-style key (prefix/name, T-LIFE-17)", Quote(k.Str, quoteN))
				}
				return true
			})
		}
		if !judged {
			return Skip("no method rule applies to this result")
		}
		return nil
	},
}

// relatedTaskUnasked warns a tasks/get, tasks/list or tasks/cancel
// result that carries related-task metadata, which such a result should
// not: it names its tasks itself (the tasks page, Associating
// Task-Related Messages: a SHOULD NOT; review rev80).
func relatedTaskUnasked(p *Pass, r gjson.Result) {
	if k := envelope.JoinPath("_meta", envelope.MetaRelatedTask); r.Get(k).Exists() {
		p.Warnf("result."+k, "a %s result carries related-task metadata, which it should not: the result names its tasks itself (the tasks page, Associating Task-Related Messages)", p.Expect.Method)
	}
}

// relatedTaskIs fails a result whose related-task _meta names another
// task than want, which whose says what names: a message related to a
// task names that task (the tasks page, Associating Task-Related
// Messages).
func relatedTaskIs(p *Pass, r gjson.Result, want, whose string) {
	k := envelope.JoinPath("_meta", envelope.MetaRelatedTask) + ".taskId"
	if rel := r.Get(k); rel.Type == gjson.String && rel.Str != want {
		p.Failf("result."+k, "the related-task metadata names task %s, %s %s: a message related to a task names that task (the tasks page, Associating Task-Related Messages)", Quote(rel.Str, quoteN), whose, Quote(want, quoteN))
	}
}

var Subscriptions = &Check{
	ID:       "PRO1009",
	Title:    "A subscriptions/listen stream is acknowledged and tagged",
	SpecRef:  "T-SUB-1, T-SUB-2, T-SUB-3, T-SUB-4, T-SUB-5, T-META-3, AMB-20",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `The stream that answers subscriptions/listen (2026-07-28) starts with
notifications/subscriptions/acknowledged, whose _meta
io.modelcontextprotocol/subscriptionId equals the listen request's id in
value and type (T-SUB-1, T-META-3); its notifications object grants no
more than the request asked for (T-SUB-2; URIs compared as RFC 3986
§6.2.2 does: scheme and host in any case, percent-encodings normalised,
dot segments removed; one that only http's or https's own normalisation,
§6.2.3, makes the asked one (a default port, an empty path) warns, as
that they name one resource is the server's to say; an extension's member of
another shape than true, granted with another value than asked, warns,
as only the extension says what is part of it). Every notification on the
stream carries the same subscriptionId (T-SUB-3), only types the request
opted in to follow (T-SUB-2), and none is a request-scoped progress or
log notification (T-SUB-5). A closing result carries the subscriptionId
too (T-META-3; T-SUB-4). An update of a resource neither subscribed to
nor, as far as its URI shows, under one warns: T-SUB-2 binds the types,
and an update "might be a sub-resource" of one subscribed, which the
server defines. The acknowledgment grants "the subset the server agreed
to honor", and "notification types the server does not support are
omitted", with no keyword: a grant of a standard type whose capability
the server's own declaration lacks (toolsListChanged without
tools.listChanged, resourceSubscriptions without resources.subscribe)
warns, and so does a notification of a type, or an update of a URI,
that the acknowledgment did not grant.

The stream need not end while the checker reads it: a stream with no
acknowledgment yet only warns (it may come later), one the server ended
without any fails; a stream the server ended with neither a closing
result nor a notifications/cancelled naming the listen request warns
(AMB-20 accepts either, or both; neither is what no reading allows, but
which of them binds an HTTP stream is not spelled out); on stdio, messages of
other requests may be interleaved, so only those tagged with this
subscription are judged there (a cancellation of another request that
is not is PRO1008's). The other messages of a listen stream
are this check's alone: PRO1003 leaves them. A notifications/cancelled
that ends the subscription by naming the listen id in requestId, without
the subscriptionId, warns: the cancellation page gives it that form, and
how it combines with T-META-3 is not spelled out (AMB-20); one naming
another request fails (T-STDIO-8: it only ends a listen stream).`,
	Run: func(p *Pass) error {
		x := p.Expect
		if x.Method != "subscriptions/listen" || x.Version != envelope.V20260728 {
			return Skip("not a 2026-07-28 subscriptions/listen")
		}
		id := x.Request.Get("id")
		stdio := p.Exchange.Transport == envelope.Stdio
		key := envelope.JoinPath("params._meta", envelope.MetaSubscriptionID)
		acked, cancelled := false, false
		var granted gjson.Result // the acknowledgment's notifications
		for i, m := range p.Reply.Messages {
			if !m.IsObject() || !m.Get("method").Exists() || m.Get("id").Exists() {
				continue
			}
			path := msgPath(p, i)
			sub := m.Get(key)
			mine := ownTag(id, m)
			if stdio && !mine {
				continue // another request's traffic on the shared stream
			}
			method := m.Get("method").Str
			// The acknowledgment's subscriptionId is T-SUB-1's; every
			// other notification's, T-SUB-3's.
			rule := "T-SUB-3, T-META-3"
			if method == "notifications/subscriptions/acknowledged" {
				rule = "T-SUB-1, T-META-3"
			}
			switch {
			case !sub.Exists() && method == "notifications/cancelled" && envelope.SameID(id, m.Get("params.requestId")):
				// The server's end of the subscription, naming it by
				// requestId as the cancellation page has it; whether it
				// carries the subscriptionId too is not spelled out.
				p.Warnf(path, "%s ends the subscription without _meta %s; it names the listen request by requestId (T-META-3, AMB-20)", Quote(method, quoteN), envelope.MetaSubscriptionID)
			case !sub.Exists():
				p.Failf(path, "%s lacks _meta %s (%s)", Quote(method, quoteN), envelope.MetaSubscriptionID, rule)
			case !mine:
				p.Failf(path, "%s carries subscriptionId %s, not the listen request's id %s (%s)", Quote(method, quoteN), clip(sub.Raw), clip(id.Raw), rule)
			}
			if method == "notifications/cancelled" && envelope.SameID(id, m.Get("params.requestId")) {
				cancelled = true
			}
			switch {
			case method == "notifications/subscriptions/acknowledged":
				ackFilter(p, path, &m)
				if !acked {
					granted = m.Get("params.notifications")
				}
				acked = true
			case method == "notifications/progress" || method == "notifications/message":
				p.Failf(path, "%s on a listen stream; request-scoped notifications never travel there (T-SUB-5)", Quote(method, quoteN))
			case method == "notifications/cancelled" && m.Get("params.requestId").Exists() && !envelope.SameID(id, m.Get("params.requestId")):
				// It only ends a listen stream, naming its request
				// (T-STDIO-8): another id here cancels what 2026-07-28
				// never cancels.
				p.Failf(path+".params.requestId", "notifications/cancelled on the listen stream names request %s, not the listen request %s (T-STDIO-8)", clip(m.Get("params.requestId").Raw), clip(id.Raw))
			case !acked:
				p.Failf(path, "%s arrived before the acknowledgment; the acknowledgment comes first (T-SUB-1)", Quote(method, quoteN))
				acked = true // say it once
			default:
				optedIn(p, path, method, &m, granted)
			}
		}
		closed := p.Reply.Response != nil && p.Reply.Response.Get("result").IsObject()
		refused := p.Reply.Response != nil && p.Reply.Response.Get("error").Exists()
		switch {
		case refused:
			// An error answers the request whole: no stream was opened,
			// so no acknowledgment is owed.
		case !acked && closed:
			// The closing result ends the stream: no acknowledgment can
			// come after it, and the first message was not one.
			p.Failf("reply", "the stream closed with its result and no notifications/subscriptions/acknowledged came first (T-SUB-1)")
		case !acked && endedByServer(p):
			p.Failf("reply", "the server ended the stream with no notifications/subscriptions/acknowledged; it is the stream's first message (T-SUB-1)")
		case !acked && p.Exchange.Transport == envelope.HTTP && p.Exchange.Response == nil:
			// No status either: the server may write its headers with the
			// first event, and the checker's look at the stream may end
			// before --timeout does, so this is no silence it can fail.
			p.Warnf("reply", "no HTTP response arrived while the checker waited, so no stream and no acknowledgment; the first message on the stream must be notifications/subscriptions/acknowledged (T-SUB-1)")
		case !acked:
			p.Warnf("reply", "no acknowledgment arrived while the stream was read; the first message on the stream must be notifications/subscriptions/acknowledged (T-SUB-1)")
		case !closed && !cancelled && endedByServer(p):
			// Either signal, or both, is right (AMB-20); neither leaves
			// the client to guess whether its subscription ended on
			// purpose or the connection broke.
			p.Warnf("reply", "the server ended the stream with neither a closing result (T-SUB-4) nor a notifications/cancelled naming the listen request (T-STDIO-8); one of them, or both, comes before it closes (AMB-20)")
		}
		if r := p.Reply.Response; r != nil && r.Get("result").IsObject() {
			sub := r.Get(envelope.JoinPath("result._meta", envelope.MetaSubscriptionID))
			if !sub.Exists() || !envelope.SameID(id, sub) {
				p.Failf("result._meta", "the closing result lacks _meta %s equal to the listen request's id (T-SUB-4, T-META-3)", envelope.MetaSubscriptionID)
			}
		}
		return nil
	},
}

// taskTimes judges a 2025-11-25 Task's timestamps: ISO 8601, as RFC 3339
// writes them (the tasks page, TTL and Resource Management: a MUST; the
// schemas type them as strings alone). One in another ISO 8601 form (no
// offset, the basic format) only warns: the page names ISO 8601 and
// links RFC 3339's profile of it.
func taskTimes(p *Pass, path string, task gjson.Result) {
	for _, k := range []string{"createdAt", "lastUpdatedAt"} {
		v := task.Get(k)
		if v.Type != gjson.String {
			continue // the schema's to judge
		}
		if rfc3339(v.Str) {
			continue
		}
		if isoTime.MatchString(v.Str) {
			p.Warnf(path+"."+k, "%s %s is ISO 8601 but not as RFC 3339 writes it (a full date and time with its offset), which the tasks page links", k, Quote(v.Str, quoteN))
			continue
		}
		p.Failf(path+"."+k, "%s %s is no ISO 8601 timestamp (the tasks page, TTL and Resource Management)", k, Quote(v.Str, quoteN))
	}
}

// rfc3339: s is an RFC 3339 date-time (§5.6): a "t" and "z" in lower case
// too (§5.6's note), and a leap second (§5.7), which Go's parser refuses
// (review rev50).
func rfc3339(s string) bool {
	u := strings.ToUpper(s)
	if strings.Contains(u, ",") {
		return false // ISO 8601's decimal comma; RFC 3339 §5.6 has "." only (Go's parser takes both)
	}
	leap := len(u) >= 19 && u[10] == 'T' && u[17:19] == "60"
	if leap {
		u = u[:17] + "59" + u[19:]
	}
	t, err := time.Parse(time.RFC3339Nano, u)
	if err != nil {
		return false
	}
	// A leap second is 23:59:60 in UTC (§5.7), whatever the offset
	// written (review rev53: 12:34:60 passed).
	t = t.UTC()
	return !leap || t.Hour() == 23 && t.Minute() == 59
}

// isoTime recognises the ISO 8601 date-time forms RFC 3339 leaves out: no
// offset, the basic format, a date alone, a space for the T.
var isoTime = regexp.MustCompile(`^\d{4}-?\d{2}-?\d{2}([T ]\d{2}(:?\d{2}(:?\d{2}([.,]\d+)?)?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$`)

// endedByServer: an HTTP listen stream that the server closed, read to
// its end (Response.Ended: a recording says so; one made before it did
// says nothing, and the stream is then not known to have ended).
func endedByServer(p *Pass) bool {
	r := p.Exchange.Response
	return p.Exchange.Transport == envelope.HTTP && p.Exchange.Failure == "" && r != nil && r.Ended && !r.Cut && !r.Truncated &&
		envelope.IsEventStream(envelope.HeaderGet(r.Header, "Content-Type"))
}

// listenFilter maps a notification a listen stream may carry to the
// filter member that opts in to it (T-SUB-2).
var listenFilter = map[string]string{
	"notifications/tools/list_changed":     "toolsListChanged",
	"notifications/prompts/list_changed":   "promptsListChanged",
	"notifications/resources/list_changed": "resourcesListChanged",
	"notifications/resources/updated":      "resourceSubscriptions",
}

// listenCapabilities are the filter members of the standard notification
// types, in the schema's order, each with the server capability that
// supports them: a type the server does not support is omitted from the
// acknowledgment (T-SUB-2), and a server that declares any of them sends
// those notifications on a listen stream alone.
var listenCapabilities = [...]struct{ member, capability string }{
	{"toolsListChanged", "tools.listChanged"},
	{"promptsListChanged", "prompts.listChanged"},
	{"resourcesListChanged", "resources.listChanged"},
	{"resourceSubscriptions", "resources.subscribe"},
}

// listenCapability is the capability behind the filter member m, "" for
// another member (an extension's).
func listenCapability(m string) string {
	for _, l := range listenCapabilities {
		if l.member == m {
			return l.capability
		}
	}
	return ""
}

// optedIn: a notification after the acknowledgment is of a type the
// request opted in to, and an update is of a resource it subscribed to
// (T-SUB-2); and of what the acknowledgment (granted: its notifications)
// granted, the subset the server agreed to honor: one of a type, or a
// resource, it left out only warns, as the spec puts no keyword on that.
func optedIn(p *Pass, path, method string, m *envelope.Message, granted gjson.Result) {
	key, ok := listenFilter[method]
	if !ok {
		return
	}
	f := p.Expect.Request.Get(envelope.JoinPath("params.notifications", key))
	g := granted.Get(envelope.JoinPath("", key))
	inAny := func(list gjson.Result, u string) bool {
		return slices.ContainsFunc(list.Array(), func(r gjson.Result) bool { return sameURI(r.Str, u) || subResource(r.Str, u) })
	}
	u := m.Get("params.uri")
	switch {
	case !(f.Type == gjson.True || f.IsArray() && len(f.Array()) > 0):
		p.Failf(path, "%s, which the listen request did not opt in to (%s; T-SUB-2)", Quote(method, quoteN), key)
	case f.IsArray() && u.Type == gjson.String && !inAny(f, u.Str):
		// T-SUB-2 binds the notification types; an update's uri "might
		// be a sub-resource" of one subscribed (the schema), and what
		// nests under a URI is the server's to say: this only warns.
		p.Warnf(path+".params.uri", "an update of %s, which is neither a resource the listen request subscribed to (%s) nor, as far as its URI shows, under one (T-SUB-2; a sub-resource is the server's to define)", Quote(u.Str, quoteN), key)
	case !granted.IsObject():
	case !(g.Type == gjson.True || g.IsArray() && len(g.Array()) > 0):
		p.Warnf(path, "%s, a type the acknowledgment did not grant (%s); it grants the subset the server agreed to honor (T-SUB-2)", Quote(method, quoteN), key)
	case g.IsArray() && u.Type == gjson.String && !inAny(g, u.Str):
		p.Warnf(path+".params.uri", "an update of %s, a resource the acknowledgment did not subscribe (%s); it grants the subset the server agreed to honor (T-SUB-2)", Quote(u.Str, quoteN), key)
	}
}

// subResource: u lies under sub (the 2026-07-28 schema: an update "might
// be a sub-resource of the one that the client actually subscribed to").
func subResource(sub, u string) bool {
	sub = strings.TrimSuffix(sub, "/")
	return len(u) > len(sub)+1 && u[len(sub)] == '/' && sameURI(sub, u[:len(sub)])
}

// sameURI: a and b name the same resource, read as RFC 3986 §6.2.2
// compares them: the scheme and the host in any case (§6.2.2.1),
// percent-encodings in any hex case, an unreserved character encoded or
// not (§6.2.2.2), and an absolute path with its dot segments removed
// (§6.2.2.3: "/a/./b/../c" is "/a/c", as a URL parser writes it). Nothing
// scheme-specific is assumed (§6.2.3, see sameBySchemeURI): which other
// spellings name one resource is the server's to say.
func sameURI(a, b string) bool {
	if a == b {
		return true
	}
	ua, errA := url.Parse(normalPercent(a))
	ub, errB := url.Parse(normalPercent(b))
	if errA != nil || errB != nil || !strings.EqualFold(ua.Scheme, ub.Scheme) || !strings.EqualFold(ua.Host, ub.Host) {
		return false
	}
	ua, ub = withoutDotSegments(ua), withoutDotSegments(ub)
	ua.Scheme, ua.Host, ub.Scheme, ub.Host = "", "", "", ""
	return normalPercent(ua.String()) == normalPercent(ub.String())
}

// withoutDotSegments removes the dot segments of u's absolute path (RFC
// 3986 §5.2.4), as resolving an empty reference against u does; an
// opaque or relative path is left as it is.
func withoutDotSegments(u *url.URL) *url.URL {
	if u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return u
	}
	r := u.ResolveReference(&url.URL{})
	// An empty query is not no query (RFC 3986 §6.2.3), which resolving
	// forgets (review rev35).
	r.ForceQuery = u.ForceQuery
	return r
}

// sameBySchemeURI: a and b differ only as RFC 3986 §6.2.3's scheme-based
// normalisation of http and https writes them: an empty path as "/", the
// scheme's default port left out. A server that canonicalises URIs so
// (JavaScript's new URL(u).href) names the resource asked for, but that
// the two name one resource is the server's knowledge, not the
// checker's.
func sameBySchemeURI(a, b string) bool {
	norm := func(s string) string {
		u, err := url.Parse(s)
		if err != nil {
			return s
		}
		port := map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
		if port == "" {
			return s
		}
		if h := u.Hostname(); u.Port() == port {
			if strings.Contains(h, ":") {
				h = "[" + h + "]" // an IPv6 literal keeps its brackets
			}
			u.Host = h
		}
		if u.Path == "" && u.Opaque == "" {
			u.Path = "/"
		}
		return u.String()
	}
	return sameURI(norm(a), norm(b))
}

// normalPercent writes each percent-encoding of s in upper-case hex, and
// one of an unreserved character as the character itself.
func normalPercent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+2 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		switch c := byte(v); {
		case err != nil:
			b.WriteByte(s[i])
			continue
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		default:
			b.WriteString(strings.ToUpper(s[i : i+3]))
		}
		i += 2
	}
	return b.String()
}

// ackFilter: the acknowledged notification types are a subset of those
// requested (T-SUB-2).
func ackFilter(p *Pass, path string, ack *envelope.Message) {
	asked := p.Expect.Request.Get("params.notifications")
	ack.Get("params.notifications").ForEach(func(k, v gjson.Result) bool {
		req := asked.Get(envelope.JoinPath("", k.Str))
		if c := listenCapability(k.Str); c != "" && (v.Type == gjson.True || v.IsArray() && len(v.Array()) > 0) && (req.Type == gjson.True || req.IsArray()) {
			// (A grant the request did not ask for fails below.)
			if declared, known := p.Expect.Facts.Declares(c); known && !declared {
				// "Notification types the server does not support are
				// omitted" (the schema's own example: promptsListChanged
				// from a server with no prompts); no keyword binds it.
				p.Warnf(envelope.JoinPath(path+".params.notifications", k.Str), "the acknowledgment grants %s, though the server declared no %s capability; a type the server does not support is omitted (T-SUB-2)", Quote(k.Str, quoteN), c)
			}
		}
		switch {
		case v.Type == gjson.False:
		case k.Str == "resourceSubscriptions":
			for _, u := range v.Array() {
				switch {
				case slices.ContainsFunc(req.Array(), func(r gjson.Result) bool { return sameURI(r.Str, u.Str) }):
				case slices.ContainsFunc(req.Array(), func(r gjson.Result) bool { return sameBySchemeURI(r.Str, u.Str) }):
					p.Warnf(path+".params.notifications.resourceSubscriptions", "the acknowledgment subscribes %s, which only the scheme's own normalisation (RFC 3986 §6.2.3: a default port, an empty path) makes one the request asked for; that they name one resource is the server's to say (T-SUB-2)", Quote(u.Str, quoteN))
				default:
					p.Failf(path+".params.notifications.resourceSubscriptions", "the acknowledgment subscribes %s, which the request did not ask for (T-SUB-2)", Quote(u.Str, quoteN))
				}
			}
		case req.Type == gjson.True, envelope.SameValue(req, v):
		case !req.Exists() || req.Type == gjson.False || req.Type == gjson.Null:
			p.Failf(envelope.JoinPath(path+".params.notifications", k.Str), "the acknowledgment grants %s, which the request did not ask for (T-SUB-2)", Quote(k.Str, quoteN))
		default:
			// An extension's member of another shape than true ({"queue":
			// "a"}): whether what is granted is part of what was asked,
			// only the extension's definition says.
			p.Warnf(envelope.JoinPath(path+".params.notifications", k.Str), "the acknowledgment grants %s as %s where the request asked for %s; whether that is part of what was asked, the extension's definition says (T-SUB-2)", Quote(k.Str, quoteN), clip(v.Raw), clip(req.Raw))
		}
		return true
	})
}

var ToolListing = &Check{
	ID:       "PRO1010",
	Title:    "Listed tools are valid and the lists stay stable",
	SpecRef:  "T-TOOL-1, T-TOOL-3, T-TOOL-4, T-TOOL-5, T-TOOL-11, T-SCHEMA-7, T-HDR-7, T-HDR-8, T-RES-3, T-PROMPT-2, T-LIFE-4",
	Severity: MUST,
	Area:     AreaProtocol,
	Doc: `A tools/list result lists tools a client can use:

- each inputSchema has root type "object" (T-SCHEMA-7; T-TOOL-2 before
  2026-07-28), and in 2025-xx
  each outputSchema too (T-TOOL-11);
- tool names are 1 to 128 characters of A-Z a-z 0-9 _ - . and unique
  (T-TOOL-5, a SHOULD from 2025-11-25: a warning), across the pages of
  one listing too (a name an earlier page listed warns, unless the page
  begins the walk again, handing out a cursor an earlier page did, which
  PRO1008 warns of, or the server said the list changed; the first 8 KB
  of a listing's names are kept);
- in 2026-07-28 every x-mcp-header is a non-empty HTTP token, unique
  case-insensitively, on an integer, string or boolean property reached
  through properties alone (T-HDR-7); a header named like a secret warns
  (T-HDR-8);
- the server declared the tools capability, since it lists tools
  (T-TOOL-1; an empty list offers none, and answering tools/list
  undeclared is PRO1001's finding); so the prompts or resources
  capability for a prompts/list, resources/list or
  resources/templates/list that lists any (T-LIFE-4 in 2025-xx; in
  2026-07-28 the prompts and resources pages' own MUST);
- an x-mcp-header on a nullable property of one such type
  (["string","null"]), or on one typed by an enum or const of one such
  type alone, only warns: a null value needs no header (the mirroring
  rule foresees it), and T-HDR-7 names single types. So does one typed
  by composition as schema generators write an optional parameter
  (anyOf or oneOf of one such type and null, Pydantic's Optional[str])
  or a reference with siblings (a one-member allOf): a client must
  resolve it to see the type. A union of types (["string","integer"],
  or anyOf of both) or a mixed enum still fails.

The lists stay stable within a run: a tools/list answered later lists the
same tools in the same order as the one the run began with (T-TOOL-3 and
T-TOOL-4 in 2026-07-28; the list may change by design, which a
list-changed notification announces, so a difference warns); prompts/list
and resources/list the same set (T-PROMPT-2, T-RES-3). A page of a paged
list holds a stretch of that first walk: its tools stand in the walk in
the same order, one after another, wherever the server cut the pages,
and no page names what the walk did not.`,
	Run: func(p *Pass) error {
		x := p.Expect
		m, err := needObject(p)
		if err != nil {
			return err
		}
		r := m.Get("result")
		if !r.IsObject() {
			return Skip("the reply is not a result object")
		}
		switch x.Method {
		case "tools/list":
			judgeTools(p, r.Get("tools"))
		case "prompts/list":
			offeredUndeclared(p, r.Get("prompts"), "prompts")
			sameSet(p, r.Get("prompts"), "name", promptNames(x.Facts), x.Facts != nil && x.Facts.PromptsListed, "T-PROMPT-2")
		case "resources/templates/list":
			offeredUndeclared(p, r.Get("resourceTemplates"), "resources")
		case "resources/list":
			offeredUndeclared(p, r.Get("resources"), "resources")
			var have []string
			listed := false
			if x.Facts != nil {
				have, listed = x.Facts.Resources, x.Facts.ResourcesListed
			}
			sameSet(p, r.Get("resources"), "uri", have, listed, "T-RES-3")
		default:
			return Skip("not a tools, prompts, resources or templates listing")
		}
		return nil
	},
}

// offeredUndeclared: a list that offers prompts or resources from a
// server that did not declare the capability, as judgeTools judges tools
// (T-TOOL-1): in 2025-xx it breaks T-LIFE-4 (it offers only the feature
// methods its capabilities advertise); in 2026-07-28, where T-LIFE-4 is
// not restated, the feature page's own MUST ("Servers that support
// prompts MUST declare the prompts capability in their DiscoverResult",
// and so for resources). An empty list offers nothing; that the method
// was served at all is PRO1001's warn.
func offeredUndeclared(p *Pass, items gjson.Result, capability string) {
	if !items.IsArray() || !envelope.NonEmpty(items) {
		return
	}
	declared, known := p.Expect.Facts.Declares(capability)
	switch {
	case !known || declared:
	case p.Expect.Version == envelope.V20260728:
		p.Failf("result", "%s lists items, but the server did not declare the %s capability, which a server that supports %s must declare in its DiscoverResult (the 2026-07-28 %s page)", p.Expect.Method, capability, capability, capability)
	default:
		undeclaredUse(p)("result", "%s lists items, but the server did not declare the %s capability (T-LIFE-4)", p.Expect.Method, capability)
	}
}

// walkedAgain: the earlier pages of the listing do not judge the names
// of this one, as it hands out a cursor an earlier page did (the walk
// begun again, which PRO1008 warns of once, not each name again), or the
// reply says the list changed (a tool an insertion moved onto this page
// is listed once at every moment; review rev27).
func walkedAgain(p *Pass) bool {
	if resp := p.Reply.Response; resp != nil {
		if c := resp.Get("result.nextCursor"); c.Type == gjson.String && slices.Contains(p.Expect.Page.Cursors, c.Str) {
			return true
		}
	}
	for i := range p.Reply.Messages {
		if p.Reply.Messages[i].Get("method").Str == "notifications/tools/list_changed" {
			return true
		}
	}
	return false
}

func judgeTools(p *Pass, tools gjson.Result) {
	x := p.Expect
	if !tools.IsArray() {
		return // not a ListToolsResult: SCH1001's to judge
	}
	if declared, known := x.Facts.Declares("tools"); known && !declared && envelope.NonEmpty(tools) {
		// An empty list offers no tool; answering the method undeclared
		// is PRO1001's finding.
		p.Failf("result.tools", "tools/list lists tools, but the server did not declare the tools capability (T-TOOL-1)")
	}
	seen := map[string]bool{}
	earlier := map[string]bool{}
	if !walkedAgain(p) {
		for _, n := range x.Page.Names {
			earlier[n] = true
		}
	}
	var names []string
	for i, t := range tools.Array() {
		path := "result.tools." + strconv.Itoa(i)
		nm := t.Get("name")
		name := nm.Str
		if nm.Type == gjson.String && !seen[name] {
			// A name listed twice is one tool, as the run's facts hold it
			// (the second listing is T-TOOL-5's finding, below).
			names = append(names, name)
		}
		switch {
		case nm.Type != gjson.String:
			// No name to judge: SCH1001 fails the tool.
		case x.Version != envelope.V20250618 && !validToolName(name):
			p.Warnf(path+".name", "tool name %s is not 1-128 characters of A-Z a-z 0-9 _ - . (T-TOOL-5)", Quote(name, quoteN))
		}
		switch {
		case nm.Type != gjson.String:
		case !seen[name] && earlier[name] && x.Version == envelope.V20250618:
			p.Warnf(path+".name", "tool name %s was listed on an earlier page of this listing too; the 2025-06-18 tools page calls a tool's name its unique identifier", Quote(name, quoteN))
		case !seen[name] && earlier[name]:
			p.Warnf(path+".name", "tool name %s was listed on an earlier page of this listing too (T-TOOL-5)", Quote(name, quoteN))
		case seen[name] && x.Version == envelope.V20250618:
			p.Warnf(path+".name", "tool name %s is listed twice; the 2025-06-18 tools page calls a tool's name its unique identifier", Quote(name, quoteN))
		case seen[name]:
			p.Warnf(path+".name", "tool name %s is listed twice (T-TOOL-5)", Quote(name, quoteN))
		}
		seen[name] = true
		if in := t.Get("inputSchema"); in.IsObject() && in.Get("type").Str != "object" {
			rule := "T-SCHEMA-7"
			if x.Version != envelope.V20260728 {
				rule = "T-TOOL-2"
			}
			p.Failf(path+".inputSchema.type", "inputSchema's root type is %s, not \"object\" (%s)", describe(in.Get("type")), rule)
		}
		// (2025-03-26 has no outputSchema: there it is an unknown member.)
		if out := t.Get("outputSchema"); out.IsObject() && x.Version != envelope.V20260728 && x.Facts.Speaks() != envelope.V20250326 && out.Get("type").Str != "object" {
			p.Failf(path+".outputSchema.type", "outputSchema's root type is %s; before 2026-07-28 it is \"object\" (T-TOOL-11)", describe(out.Get("type")))
		}
		if x.Version == envelope.V20260728 {
			judgeParamHeaders(p, path+".inputSchema", t.Get("inputSchema"))
		}
	}
	f := x.Facts
	if f == nil || !f.ToolsListed || len(f.ToolOrder) == 0 {
		return
	}
	first := firstOnly(f.ToolOrder)
	// A page holds a run of the whole list: from a stable list, every
	// page is a stretch of the first walk's order, wherever the server
	// cut its pages.
	paged := p.Expect.Request.Get("params.cursor").Exists() || p.Reply.Response.Get("result.nextCursor").Exists()
	// Both rules are 2026-07-28's: before it a tool set may vary by
	// session.
	switch {
	case x.Version != envelope.V20260728:
	case paged && !subsetOf(names, first):
		p.Warnf("result.tools", "the page lists tools the run's first tools/list did not; a tool set does not vary by connection (T-TOOL-4) and changes are announced")
	case paged && !stretchOf(firstOnly(names), first):
		p.Warnf("result.tools", "the page's tools are not a stretch of the run's first tools/list: they moved, or a tool between them is gone; the order is stable (T-TOOL-3, SHOULD) and the set does not vary by connection (T-TOOL-4)")
	case paged:
	case !sameStrings(sorted(names), sorted(first)):
		p.Warnf("result.tools", "the tools listed differ from the run's first tools/list; a tool set does not vary by connection (T-TOOL-4) and changes are announced")
	case !slices.Equal(names, first):
		p.Warnf("result.tools", "the same tools in another order than the run's first tools/list (T-TOOL-3, SHOULD)")
	}
}

// subsetOf: every string of s is in of.
func subsetOf(s, of []string) bool {
	in := make(map[string]bool, len(of))
	for _, x := range of {
		in[x] = true
	}
	return !slices.ContainsFunc(s, func(x string) bool { return !in[x] })
}

// stretchOf: s stands in of as one unbroken run, in order.
func stretchOf(s, of []string) bool {
	if len(s) == 0 {
		return true
	}
	at := slices.Index(of, s[0])
	return at >= 0 && len(of)-at >= len(s) && slices.Equal(s, of[at:at+len(s)])
}

func validToolName(n string) bool {
	if n == "" || len(n) > 128 {
		return false
	}
	for _, c := range []byte(n) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// judgeParamHeaders applies T-HDR-7 and T-HDR-8 to one inputSchema.
func judgeParamHeaders(p *Pass, path string, schema gjson.Result) {
	seen := map[string]bool{}
	for _, d := range expect.HeaderDecls(schema, path) {
		judgeParamHeader(p, d, seen)
	}
}

// propertyType says, for a finding, how a property types its value.
func propertyType(prop gjson.Result) string {
	switch t := prop.Get("type"); {
	case t.Type == gjson.String:
		return "of type " + clip(t.Raw)
	case t.IsArray():
		return "of types " + clip(t.Raw)
	case t.Exists():
		return `whose "type" is ` + describe(t) + ", not a type name"
	case prop.Get("anyOf").Exists() || prop.Get("oneOf").Exists() || prop.Get("allOf").Exists():
		return "typed through anyOf, oneOf or allOf by no one integer, string or boolean type"
	case prop.Get("enum").Exists() || prop.Get("const").Exists():
		return "typed by an enum or const whose values are not all integers, all strings or all booleans"
	default:
		return "with no type"
	}
}

var secretWords = []string{"password", "passwd", "secret", "token", "apikey", "api-key", "api_key", "credential", "authorization"}

func judgeParamHeader(p *Pass, d expect.HeaderDecl, seen map[string]bool) {
	path := d.At + ".x-mcp-header"
	name, prop, typed := d.Value.Str, d.Prop, d.Typed
	switch {
	case !d.Named():
		p.Failf(path, "x-mcp-header %s is not a non-empty HTTP token (T-HDR-7)", clip(d.Value.Raw))
		return
	case !d.Direct:
		p.Failf(path, "x-mcp-header %s sits under items, composition or $ref; only properties reached through properties may carry one (T-HDR-7)", Quote(name, quoteN))
	case seen[strings.ToLower(name)]:
		p.Failf(path, "x-mcp-header %s is used twice (case-insensitively) in one inputSchema (T-HDR-7)", Quote(name, quoteN))
	}
	seen[strings.ToLower(name)] = true
	switch d.Kind {
	case expect.HeaderOther:
		p.Failf(path, "x-mcp-header %s is on a property %s; only a property of one type, integer, string or boolean, may carry one (T-HDR-7)", Quote(name, quoteN), propertyType(typed))
	case expect.HeaderNullable:
		// T-HDR-4 foresees a null value (no header then), so a
		// nullable property may be meant; T-HDR-7 names single types.
		p.Warnf(path, "x-mcp-header %s is on a property that is nullable, or typed by enum or const alone; T-HDR-7 names only integer, string and boolean properties", Quote(name, quoteN))
	case expect.HeaderRef:
		p.Warnf(path, "x-mcp-header %s is on a property typed through $ref, which a client must resolve to see an integer, string or boolean (T-HDR-7)", Quote(name, quoteN))
	case expect.HeaderComposed:
		p.Warnf(path, "x-mcp-header %s is on a property typed through anyOf, oneOf or allOf, which a client must resolve to see an integer, string or boolean (T-HDR-7)", Quote(name, quoteN))
	}
	lower := strings.ToLower(name + " " + prop.Get("description").Str)
	for _, w := range secretWords {
		if strings.Contains(lower, w) {
			p.Warnf(path, "x-mcp-header %s looks like it carries a secret; secrets are not mirrored into headers (T-HDR-8)", Quote(name, quoteN))
			break
		}
	}
}

func promptNames(f *expect.Facts) []string {
	if f == nil {
		return nil
	}
	var out []string
	for _, p := range f.Prompts {
		out = append(out, p.Name)
	}
	return out
}

// sameSet warns when a listing names another set than the run's first
// one, or a page of it names what that one did not (2026-07-28 rules:
// lists do not vary by connection).
func sameSet(p *Pass, items gjson.Result, key string, have []string, listed bool, rule string) {
	if p.Expect.Version != envelope.V20260728 || !listed || !items.IsArray() {
		return
	}
	var got []string
	for _, it := range items.Array() {
		got = append(got, it.Get(key).Str)
	}
	switch {
	case p.Expect.Request.Get("params.cursor").Exists() || p.Reply.Response.Get("result.nextCursor").Exists():
		if !subsetOf(got, have) {
			p.Warnf("result", "the page lists what the run's first listing did not; a list does not vary by connection (%s) and changes are announced", rule)
		}
	case !sameStrings(sorted(got), sorted(have)):
		p.Warnf("result", "the list differs from the run's first listing; it does not vary by connection (%s) and changes are announced", rule)
	}
}

// firstOnly is s with each string at its first place only.
func firstOnly(s []string) []string {
	seen := make(map[string]bool, len(s))
	return slices.DeleteFunc(slices.Clone(s), func(x string) bool {
		dup := seen[x]
		seen[x] = true
		return dup
	})
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func sameStrings(a, b []string) bool { return slices.Equal(a, b) }
