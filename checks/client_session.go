package checks

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// A client message is judged against what the traffic before it showed:
// the ids the client has in flight, whether it initialized, the version
// it negotiated, the session the server issued, the capabilities it
// declared, the requests the server is waiting on. A ClientTracker keeps
// that, fed in the order the relay saw things; the relay's live judging
// and lint of its recording feed it the same events, so both judge each
// client message against the same history.

// A ClientMessage is one message the client sent, as the relay saw it.
type ClientMessage struct {
	// Seq is its place in the relay's order, shared by both directions.
	Seq       uint64
	Transport string // envelope.HTTP or envelope.Stdio
	// HTTPMethod and Header are the HTTP request's (secrets redacted);
	// empty on stdio.
	HTTPMethod string
	Header     http.Header
	// Body is the message: a stdio line, a POST body; empty for a GET or
	// DELETE.
	Body []byte
}

// A ServerRequest is a request the server sent the client (2025-xx:
// sampling, elicitation, roots, ping).
type ServerRequest struct {
	Seq uint64
	// On is the client's HTTP request whose reply stream carried it (a
	// POST's or the GET stream's); 0 on stdio.
	On   uint64
	Body []byte
}

// A Closed event ends the exchange of one client request: the server
// answered it, or it ended without an answer (the client went away, the
// relay stopped, a later request took its id).
type Closed struct {
	Request uint64 // the client request's Seq
	// Status and SessionID are the HTTP reply's status and Mcp-Session-Id
	// header (the session an initialize answer issues); zero on stdio.
	Status    int
	SessionID string
	// Answer is the response message; nil when none came.
	Answer []byte
}

// Bounds on what a tracker remembers, so that a session of any length
// costs bounded memory. Past them the oldest is forgotten, and a verdict
// that would need it is not made.
const (
	maxUsedIDs      = 1 << 16
	maxConversation = 1024
	maxOpen         = 4096
)

// A ClientTracker follows the client's side of the traffic of one relay
// run. It is not safe for concurrent use: the relay's delivery order is
// its order.
type ClientTracker struct {
	stdio       *conversation
	sessions    map[string]*conversation // HTTP, by the session id the server issued
	sessionless *conversation            // HTTP: an initialize answered without a session id
	unseen      *conversation            // HTTP: sessionless traffic whose start the relay did not see
	detached    *conversation            // HTTP: traffic without the session id the server issued, among several sessions
	modern      *conversation            // HTTP 2026-07-28: stateless requests
	// initializing is the conversation of an HTTP initialize not yet
	// answered: a client that fell back from 2026-07-28 (its probe
	// refused) speaks 2025 from that request on, and what it sends
	// before the answer, with no mark of either era, is that session's.
	initializing *conversation
	// refused is the conversation of the last HTTP initialize the server
	// refused or left unanswered: what the client sends next without a
	// session is that client's, whose session is not initialized.
	refused   *conversation
	byRequest map[uint64]*conversation // HTTP: a client request's conversation, for what comes back on it
	// byRequest's keys, oldest first: streams those of GETs, order the
	// others, finished those of exchanges that ended (Close; a POST's
	// stream ends with its answer, while a GET's exchange closes at its
	// head and its stream lives on). A finished one is forgotten first,
	// a GET stream last, so that the stream the server asks on outlives
	// any number of calls. They may hold keys byRequest no longer has;
	// they are compacted.
	order, streams, finished []uint64
	gets                     map[uint64]bool // streams' keys
	deletes                  map[uint64]bool // HTTP: the Seqs of DELETEs of a known session
	issued                   []string        // session ids the server issued, oldest first
	sessionOrder             []string        // sessions' keys, oldest first
	// reinits are initializes sent in an initialized HTTP session, with
	// its id, by their Seq: the new session each begins if the server
	// answers it with another session id.
	reinits map[uint64]*conversation
	// sessionlessVersions are the versions initializes answered without
	// a session id negotiated, and sessionlessInits how many there were:
	// clients the relay cannot tell apart.
	sessionlessVersions []string
	sessionlessInits    int
	// sessionlessNotified: one of them sent notifications/initialized.
	sessionlessNotified bool
	// notMCP are the Seqs of HTTP requests that are no MCP requests
	// (OPTIONS, HEAD) still open: they belong to no conversation.
	notMCP map[uint64]bool
}

// NewClientTracker returns a tracker that has seen nothing.
func NewClientTracker() *ClientTracker {
	return &ClientTracker{sessions: map[string]*conversation{}, byRequest: map[uint64]*conversation{}, deletes: map[uint64]bool{}}
}

// A conversation is one client's session as far as the relay can tell
// them apart: the stdio process, an HTTP session, the sessionless HTTP
// traffic.
type conversation struct {
	// fromStart: the relay saw it begin, so what it did not see did not
	// happen. lost: messages of it were not observed. forgot: the tracker
	// forgot an exchange of it still open (past its bounds), so requests
	// of the server's on that exchange's stream go unrecorded.
	fromStart, lost, forgot bool
	// sessionID is the Mcp-Session-Id the server issued ("" none);
	// ended is the DELETE that ended it (0: not ended).
	sessionID string
	ended     uint64
	// gone is the request carrying sessionID the server answered 404
	// (0: none): the session is gone (T-SESS-3). carried are the open
	// requests that carried sessionID, to tell such a 404 from one to a
	// request that lacked it.
	gone    uint64
	carried map[uint64]bool
	// stateless: HTTP traffic the relay cannot attribute to one client.
	stateless bool
	// msgs counts the client's messages seen in it.
	msgs int
	// detached: HTTP messages without a session id while the server has
	// issued several; which session each belongs to is unknown.
	detached bool

	initSeq uint64 // the initialize request, 0 none
	// initFailed is the last initialize the server refused or left
	// unanswered (0 none): nothing was negotiated.
	initFailed uint64
	initKey    string // its id key
	initAsked  string // the protocolVersion it asked for
	initDone   bool   // initialize was answered with a result
	version    string // the version that answer negotiated
	notified   bool   // notifications/initialized was sent
	modern     bool   // the client spoke 2026-07-28 (_meta) in it
	caps       json.RawMessage
	capsKnown  bool
	// serverCaps are the capabilities the server's initialize result
	// declared (nil: none seen).
	serverCaps json.RawMessage

	inFlight map[string]int    // id key → requests with it awaiting their answer
	open     map[uint64]string // a request's Seq → its id key, until it closes
	// tokens are the progressTokens the client's requests offered, by
	// the request's Seq, compared by value as ids are: those whose
	// request is still open are active (progress, Progress Flow: unique
	// across all active requests). Entries of closed requests are pruned.
	tokens   map[uint64]string
	used     map[string]uint64 // id key → the first request that used it
	usedFull bool              // used stopped growing at maxUsedIDs
	// probed are the id keys of 2026-07-28 requests sent before the
	// session's initialize: a dual-era client's probe, before it fell
	// back to a 2025 session.
	probed map[string]bool
	// refusedInit are the id keys of initialize requests the server
	// refused: no session began with them.
	refusedInit map[string]bool
	// doubted are the id keys of requests that ended in a 5xx without
	// their answer: whether they were used in the session is not known.
	doubted map[string]bool

	// unreadable: the server sent a message whose id a client cannot
	// read (no JSON, no object, an id JSON-RPC forbids, no method):
	// an error with id null may answer it (JSON-RPC §5).
	unreadable bool

	asked   map[string]asked  // the server's requests awaiting the client's answer
	answers map[string]uint64 // id key of a server request → the client's answer to it
	// posting are the server's requests answered by a POST whose reply
	// has not come (its seq → the id keys and what they asked): an HTTP
	// layer that refuses the POST (refusedAtHTTP) let no answer in, and
	// the request waits again.
	posting map[uint64][]asked
	// taskTokens are the progress tokens (id keys) of the server's
	// task-augmented requests the client answered: a task's token stays
	// active for its life, past the answer (2025-11-25), which the relay
	// does not follow.
	taskTokens map[string]bool
	// taskOf is the method of the server's task-augmented request each
	// task the client created answers (task id → method): its
	// tasks/result returns what that request would have (the tasks
	// page, Result Retrieval).
	taskOf map[string]string

	mrtr *mrtrState // 2026-07-28 input_required rounds (client_mrtr.go)
}

// asked is one server request awaiting the client's answer.
type asked struct {
	method string
	mode   string // an elicitation's mode ("" is form)
	task   bool   // task-augmented (params.task, 2025-11-25): a task may answer it
	token  string // the id key of the progressToken it offered ("" none)
	taskID string // the task a tasks/get, tasks/cancel or tasks/result names ("" none)
	id     gjson.Result
	seq    uint64
}

func newConversation(fromStart bool) *conversation {
	return &conversation{fromStart: fromStart, inFlight: map[string]int{}, open: map[uint64]string{},
		used: map[string]uint64{}, asked: map[string]asked{}, answers: map[string]uint64{}, taskTokens: map[string]bool{}, taskOf: map[string]string{}}
}

// A ClientView is what the traffic before one client message showed, as
// the client checks read it. Its methods only read.
type ClientView struct {
	c *conversation
	// Transport of the traffic.
	transport string
	// headerSession is the Mcp-Session-Id the message carries ("" none);
	// unknownSession: the relay never saw the server issue it.
	headerSession  string
	unknownSession bool
	// issued are the session ids the server issued in this run (HTTP);
	// sessionless: an initialize was answered without one.
	issued      []string
	sessionless bool
	// sessionlessVersions: the versions sessionless clients negotiated;
	// sessionlessInits: how many initializes they made.
	sessionlessVersions []string
	sessionlessInits    int
	// sessionlessNotified: one of them sent notifications/initialized.
	sessionlessNotified bool
	// handshake: the message, without a session id, falls in an HTTP
	// initialize not yet answered (the new session has no id yet).
	handshake bool
}

// carriesGoneSession: the message carries the id of its session, which
// the server ended with a 404 (see conversation.gone).
func (v *ClientView) carriesGoneSession() bool {
	return v.headerSession != "" && !v.unknownSession && v.c.gone != 0 && v.c.sessionID == v.headerSession
}

// View returns what the traffic before m showed. It changes nothing: call
// Client(m) after judging m.
func (t *ClientTracker) View(m *ClientMessage) *ClientView {
	c, unknown := t.lookup(m, false)
	v := &ClientView{c: c, transport: m.Transport, unknownSession: unknown,
		issued: t.issued, sessionless: t.sessionless != nil, sessionlessVersions: t.sessionlessVersions, sessionlessInits: t.sessionlessInits, sessionlessNotified: t.sessionlessNotified,
		handshake: c != nil && c == t.initializing}
	if m.Transport == envelope.HTTP {
		v.headerSession = envelope.HeaderGet(m.Header, "Mcp-Session-Id")
	}
	return v
}

// lookup finds m's conversation; with create it makes the one m starts
// or names. unknown: m names a session the relay never saw issued.
func (t *ClientTracker) lookup(m *ClientMessage, create bool) (c *conversation, unknown bool) {
	if m.Transport != envelope.HTTP {
		if t.stdio == nil {
			// wrap starts the server: it sees the session from its start.
			// (A recording cut to begin mid-session cannot be told from
			// one whose server wrote first: a server's notifications are
			// not traffic lines, yet take the first numbers.)
			c = newConversation(true)
			if create {
				t.stdio = c
			}
			return c, false
		}
		return t.stdio, false
	}
	msg := envelope.Parse(m.Body)
	if sid := envelope.HeaderGet(m.Header, "Mcp-Session-Id"); sid != "" {
		if c := t.sessions[sid]; c != nil {
			return c, false
		}
		c = newConversation(false)
		c.sessionID = sid
		if create {
			t.addSession(sid, c)
		}
		return c, true
	}
	switch {
	case msg.Get("method").Str == "initialize" && msg.Get("id").Exists():
		// A new session begins; it is keyed once the server answers.
		c = newConversation(true)
		if create {
			t.initializing = c
		}
		return c, false
	case modernMessage(m, &msg):
		if t.modern == nil {
			c = newConversation(true)
			c.stateless, c.modern = true, true
			if create {
				t.modern = c
			}
			return c, false
		}
		return t.modern, false
	case t.sessionless != nil:
		return t.sessionless, false
	case t.initializing != nil && t.askerOf(&msg) != nil:
		// An answer to a request the server sent in a session it issued
		// is that session's, whatever handshake is under way: its client
		// left out its id (CLI1007).
		return t.askerOf(&msg), false
	case t.initializing != nil:
		// Before its initialize's answer (a ping, say, T-LIFE-1): the
		// handshake under way is the era the client speaks.
		return t.initializing, false
	case t.refused != nil && len(t.issued) == 0:
		// After a handshake that failed: that client's, uninitialized.
		return t.refused, false
	case t.modern != nil && len(t.issued) == 0:
		// Nothing marks its era (a notification needs neither _meta nor
		// the header, AMB-5), and the client has spoken 2026-07-28.
		return t.modern, false
	}
	if c := t.onlyLiveSession(); c != nil {
		// One client forgot its session id (CLI1007 says so): its other
		// messages are still judged in its session.
		return c, false
	}
	if len(t.issued) > 0 {
		if t.detached == nil {
			c = newConversation(false)
			c.stateless, c.detached = true, true
			if create {
				t.detached = c
			}
			return c, false
		}
		return t.detached, false
	}
	if t.unseen == nil {
		c = newConversation(false)
		c.stateless = true
		if create {
			t.unseen = c
		}
		return c, false
	}
	return t.unseen, false
}

// modernMessage: the message speaks 2026-07-28 (its _meta or its header).
func modernMessage(m *ClientMessage, msg *envelope.Message) bool {
	if msg.Get(envelope.MetaPath(envelope.MetaProtocolVersion)).Str == envelope.V20260728 {
		return true
	}
	return m.Transport == envelope.HTTP && envelope.HeaderGet(m.Header, "Mcp-Protocol-Version") == envelope.V20260728
}

// onlyLiveSession is the one HTTP session not ended, if there is exactly one.
// askerOf is the one issued session whose server asked, and awaits the
// answer to, the request msg answers; nil when msg is no answer, or none
// or several did.
func (t *ClientTracker) askerOf(msg *envelope.Message) *conversation {
	id := msg.Get("id")
	if !msg.IsObject() || msg.Get("method").Exists() || !id.Exists() {
		return nil
	}
	key := envelope.IDKey(id)
	if key == "" {
		return nil
	}
	var only *conversation
	for _, c := range t.sessions {
		if _, ok := c.asked[key]; !ok {
			if _, ok := c.asked[envelope.OtherTypeKey(key)]; !ok {
				continue
			}
		}
		if only != nil {
			return nil
		}
		only = c
	}
	return only
}

func (t *ClientTracker) onlyLiveSession() *conversation {
	var only *conversation
	for _, c := range t.sessions {
		if c.ended != 0 || !c.fromStart {
			continue
		}
		if only != nil {
			return nil
		}
		only = c
	}
	return only
}

func (t *ClientTracker) addSession(sid string, c *conversation) {
	if _, ok := t.sessions[sid]; !ok {
		if len(t.sessionOrder) >= maxConversation {
			delete(t.sessions, t.sessionOrder[0])
			t.sessionOrder = t.sessionOrder[1:]
		}
		t.sessionOrder = append(t.sessionOrder, sid)
	}
	t.sessions[sid] = c
}

// issue takes in that the server issued session sid, to c.
func (t *ClientTracker) issue(sid string, c *conversation) {
	t.addSession(sid, c)
	if len(t.issued) >= maxConversation {
		t.issued = t.issued[1:]
	}
	t.issued = append(t.issued, sid)
}

func (t *ClientTracker) remember(seq uint64, c *conversation, stream bool) {
	if len(t.byRequest) >= maxOpen {
		t.forgetOne()
	}
	t.byRequest[seq] = c
	if stream {
		if t.gets == nil {
			t.gets = map[uint64]bool{}
		}
		t.gets[seq] = true
		t.streams = append(t.streams, seq)
		if len(t.streams) > 2*maxOpen {
			t.streams = t.live(t.streams)
		}
		return
	}
	t.order = append(t.order, seq)
	if len(t.order) > 2*maxOpen {
		t.order = t.live(t.order)
	}
}

// forgetOne forgets one exchange: the oldest finished one, else the
// oldest still open, else the oldest GET stream. A conversation whose
// open exchange is forgotten is no longer seen whole: the server may ask
// on that stream, unrecorded.
func (t *ClientTracker) forgetOne() {
	for _, q := range []*[]uint64{&t.finished, &t.order, &t.streams} {
		for len(*q) > 0 {
			seq := (*q)[0]
			*q = (*q)[1:]
			c, ok := t.byRequest[seq]
			if !ok {
				continue
			}
			delete(t.byRequest, seq)
			delete(t.deletes, seq)
			delete(t.gets, seq)
			if q == &t.finished {
				return
			}
			c.forgot = true
			if key, ok := c.open[seq]; ok {
				// Its end will not be matched: it no longer counts as in
				// flight, lest its id's later use be read as a reuse.
				delete(c.open, seq)
				if c.inFlight[key]--; c.inFlight[key] <= 0 {
					delete(c.inFlight, key)
				}
			}
			return
		}
	}
}

// live keeps the seqs byRequest still holds.
func (t *ClientTracker) live(seqs []uint64) []uint64 {
	out := make([]uint64, 0, len(t.byRequest))
	for _, seq := range seqs {
		if _, ok := t.byRequest[seq]; ok {
			out = append(out, seq)
		}
	}
	return out
}

// conversationOf finds the conversation of what came back on the
// client's request seq (HTTP), or the stdio one (nil: an HTTP exchange
// the tracker has forgotten).
func (t *ClientTracker) conversationOf(seq uint64) *conversation {
	if c := t.byRequest[seq]; c != nil {
		return c
	}
	if len(t.order) > 0 || len(t.streams) > 0 || len(t.sessions) > 0 {
		return nil
	}
	if t.stdio == nil {
		// The server wrote before the client's first line (wrap started
		// it, so this is the session's start): its request is the
		// session's, as the client's first message would begin it.
		t.stdio = newConversation(true)
	}
	return t.stdio
}

// Client takes in a message the client sent, after it was judged.
func (t *ClientTracker) Client(m *ClientMessage) {
	if notMCPRequest(m) {
		// A CORS preflight or a HEAD: no message of any session.
		if len(t.notMCP) >= maxOpen {
			for seq := range t.notMCP {
				delete(t.notMCP, seq)
				break
			}
		}
		if t.notMCP == nil {
			t.notMCP = map[uint64]bool{}
		}
		t.notMCP[m.Seq] = true
		return
	}
	c, _ := t.lookup(m, true)
	if m.Transport == envelope.HTTP {
		t.remember(m.Seq, c, m.HTTPMethod == http.MethodGet)
		if m.HTTPMethod == http.MethodDelete && c.sessionID != "" {
			t.deletes[m.Seq] = true
		}
	}
	c.msgs++
	if m.Transport == envelope.HTTP && m.HTTPMethod == http.MethodPost && c.sessionID != "" && envelope.HeaderGet(m.Header, "Mcp-Session-Id") == c.sessionID && len(c.carried) < maxOpen {
		// (A GET's 404 says the server offers no stream there, which it
		// owes a 405 for: no word on the session.)
		if c.carried == nil {
			c.carried = map[uint64]bool{}
		}
		c.carried[m.Seq] = true
	}
	msg := envelope.Parse(m.Body)
	if msg.IsArray() {
		t.batch(c, m, &msg)
		return
	}
	if !msg.IsObject() {
		return
	}
	method, id := msg.Get("method"), msg.Get("id")
	if modernMessage(m, &msg) && method.Str != "initialize" {
		// (An initialize never speaks 2026-07-28, whatever its header.)
		c.modern = true
	}
	switch {
	case method.Exists() && id.Exists():
		key := envelope.IDKey(id)
		if key != "" && len(c.open) >= maxOpen {
			// More requests unanswered than the tracker keeps (their ends
			// went unseen): what is in flight is no longer known.
			c.lost = true
		} else if key != "" {
			c.inFlight[key]++
			c.open[m.Seq] = key
			c.use(key, m.Seq)
			if tk := envelope.IDKey(msg.Get("params._meta.progressToken")); tk != "" {
				c.offer(m.Seq, tk)
			}
			c.mrtrSent(m.Seq, &msg)
			if c.initSeq == 0 && method.Str != "initialize" && modernMessage(m, &msg) && len(c.probed) < maxUsedIDs {
				if c.probed == nil {
					c.probed = map[string]bool{}
				}
				c.probed[key] = true
			}
		}
		if method.Str == "initialize" && c.initSeq == 0 && len(c.probed) > 0 {
			// A dual-era client falls back to a 2025 session: a probe
			// still unanswered is abandoned (silence marks the server
			// legacy, T-COMPAT-4), no longer a request in flight.
			for seq, k := range c.open {
				if seq != m.Seq && c.probed[k] {
					delete(c.open, seq)
					if c.inFlight[k]--; c.inFlight[k] <= 0 {
						delete(c.inFlight, k)
					}
				}
			}
		}
		if _, pending := c.open[c.initSeq]; method.Str == "initialize" && (c.initSeq == 0 || !c.initDone && pending && c.initSeq != m.Seq) {
			// (An initialize sent again while the first still awaits its
			// answer, one the server may never give: the newer one is the
			// handshake whose answer counts.)
			c.initSeq, c.initKey, c.initAsked = m.Seq, key, msg.Get("params.protocolVersion").Str
			if caps := msg.Get("params.capabilities"); caps.IsObject() {
				c.caps, c.capsKnown = json.RawMessage(caps.Raw), true
			}
		}
		if method.Str == "initialize" && m.Transport == envelope.HTTP && c.initDone && c.sessionID != "" && c.initSeq != m.Seq && len(t.reinits) < maxConversation {
			// It carries the old session's id (a client must start a new
			// session without one); if the server answers with a new
			// session id, that session begins here.
			nc := newConversation(true)
			nc.initSeq, nc.initKey, nc.initAsked = m.Seq, key, msg.Get("params.protocolVersion").Str
			if caps := msg.Get("params.capabilities"); caps.IsObject() {
				nc.caps, nc.capsKnown = json.RawMessage(caps.Raw), true
			}
			if key != "" {
				nc.used[key] = m.Seq
			}
			if t.reinits == nil {
				t.reinits = map[uint64]*conversation{}
			}
			t.reinits[m.Seq] = nc
		}
		if (c.probed[key] || c.refusedInit[key]) && c.initSeq != 0 {
			// The session's own use of a probe's id, or of a refused
			// initialize's: from now on a reuse is one within the session.
			delete(c.probed, key)
			delete(c.refusedInit, key)
			c.used[key] = m.Seq
		}
	case method.Exists():
		switch method.Str {
		case "notifications/initialized":
			c.notified = true
			if c.stateless {
				t.sessionlessNotified = true
			}
		case "notifications/cancelled":
			// A cancelled request no longer awaits its answer (the server
			// sends none, T-STDIO-7): its id is free where only ids in
			// flight are barred (2026-07-28).
			key := envelope.IDKey(msg.Get("params.requestId"))
			for seq, k := range c.open {
				if k == key && key != "" {
					delete(c.open, seq)
					if c.inFlight[k]--; c.inFlight[k] <= 0 {
						delete(c.inFlight, k)
					}
					break
				}
			}
		}
	default:
		// The client's answer to a server request.
		c.answer(id, msg.Get("result"), m.Seq, m.Transport == envelope.HTTP)
	}
}

// offer takes in that request seq, now open, offered the progressToken of
// key tk. Tokens of requests no longer open are pruned once they
// outnumber the open ones, so the map stays within twice maxOpen.
func (c *conversation) offer(seq uint64, tk string) {
	if c.tokens == nil {
		c.tokens = map[uint64]string{}
	}
	if len(c.tokens) >= 2*len(c.open)+16 {
		for s := range c.tokens {
			if _, ok := c.open[s]; !ok {
				delete(c.tokens, s)
			}
		}
	}
	c.tokens[seq] = tk
}

// activeToken is the first request still open that offered the
// progressToken of key tk (0: none).
func (c *conversation) activeToken(tk string) uint64 {
	var first uint64
	for seq, k := range c.tokens {
		if _, ok := c.open[seq]; ok && k == tk && (first == 0 || seq < first) {
			first = seq
		}
	}
	return first
}

// batch takes in the members of a batch (2025-03-26 allows one,
// T-V0326-1; later versions' are CLI1001's fails, their members still
// sent): the ids its requests use in the session, its
// notifications/initialized, its answers to the server's requests. Its
// requests are not counted in flight: the relay does not pair a batch's
// answers member by member. An initialize inside a batch (which
// 2025-03-26 forbids) begins no session here.
func (t *ClientTracker) batch(c *conversation, m *ClientMessage, msg *envelope.Message) {
	for _, member := range msg.Root().Array() {
		if !member.IsObject() {
			continue
		}
		method, id := member.Get("method"), member.Get("id")
		switch {
		case method.Exists() && id.Exists():
			if key := envelope.IDKey(id); key != "" && method.Str != "initialize" {
				c.use(key, m.Seq)
			}
		case method.Str == "notifications/initialized":
			c.notified = true
			if c.stateless {
				t.sessionlessNotified = true
			}
		case !method.Exists():
			c.answer(id, member.Get("result"), m.Seq, m.Transport == envelope.HTTP)
		}
	}
}

// use records the first use of the id key by request seq in the session,
// within the bound the tracker keeps.
func (c *conversation) use(key string, seq uint64) {
	if _, ok := c.used[key]; ok {
		return
	}
	if len(c.used) < maxUsedIDs {
		c.used[key] = seq
	} else {
		c.usedFull = true
	}
}

// answer takes in the client's answer (message seq; posted: in an HTTP
// POST) to the server's request it names by id: no longer asked, and
// answered.
func (c *conversation) answer(id gjson.Result, result gjson.Result, seq uint64, posted bool) {
	created := envelope.TaskCreation(result)
	// Only the request's own id (in value) answers it: an answer that
	// match pairs otherwise (its id in another type, the only request
	// waiting) is judged wrong (CLI1004) and answers nothing, so the
	// request still waits (review rev57: a stray answer, or a parse
	// error's null id, made the right answer after it "a second").
	key := envelope.IDKey(id)
	a, ok := c.asked[key]
	if !ok || key == "" {
		return
	}
	if created && a.task && a.token != "" && len(c.taskTokens) < maxUsedIDs {
		// (Only a task the client took on lives on: a task-augmented
		// request answered plainly ended with its answer; review rev58.)
		c.taskTokens[a.token] = true
	}
	if t := result.Get("task.taskId"); created && a.task && t.Type == gjson.String && len(c.taskOf) < maxUsedIDs {
		c.taskOf[t.Str] = a.method
	}
	delete(c.asked, key)
	if len(c.answers) < maxUsedIDs {
		c.answers[key] = seq
	}
	if posted && len(c.posting) < maxOpen {
		if c.posting == nil {
			c.posting = map[uint64][]asked{}
		}
		c.posting[seq] = append(c.posting[seq], a)
	}
}

// unanswer gives back the server's requests the client's POST seq
// answered (taken from posting), which the HTTP layer refused before any MCP code read it
// (a 401 the client retries after refreshing its token, a 400 of a
// malformed body): they still wait for their answer, and the next is
// no second one (review rev72).
func (c *conversation) unanswer(seq uint64, answered []asked) {
	for _, a := range answered {
		key := envelope.IDKey(a.id)
		if c.answers[key] == seq {
			delete(c.answers, key)
			c.asked[key] = a
		}
	}
}

// match finds the server request an answer with id answers, as the
// relays pair them: the same id, else its value in the other type, else
// the only one waiting, where the relay saw the whole session: else the
// answer may be to a request it never saw, and is rightly no other's.
func (c *conversation) match(id gjson.Result) (asked, bool) {
	key := envelope.IDKey(id)
	if a, ok := c.asked[key]; ok && key != "" {
		return a, true
	}
	if a, ok := c.asked[envelope.OtherTypeKey(key)]; ok && key != "" {
		return a, true
	}
	if len(c.asked) == 1 && c.seenWhole() {
		for _, a := range c.asked {
			return a, true
		}
	}
	return asked{}, false
}

// seenWhole: the relay saw the session from its start and lost none of
// its messages, so every request of the server's is known.
func (c *conversation) seenWhole() bool { return !c.lost && !c.forgot && c.fromStart }

// Server takes in a request the server sent, or the requests of a batch
// it sent (2025-03-26 allows one; review rev58: their answers and
// progress were judged as answering nothing), or a message of the
// server's that is none (no JSON, an invalid request), which a client may
// refuse with id null.
func (t *ClientTracker) Server(r *ServerRequest) {
	c := t.conversationOf(r.On)
	if c == nil {
		return // it came on a request the tracker has forgotten
	}
	msg := envelope.Parse(r.Body)
	if !msg.Valid || !msg.IsObject() {
		// No JSON, no object, or a batch (which only 2025-03-26 has,
		// and whose invalid members JSON-RPC §6 answers id null).
		c.unreadable = true
	}
	if !msg.Valid || !msg.IsObject() && !msg.IsArray() {
		return
	}
	members := []gjson.Result{msg.Root()}
	if msg.IsArray() {
		members = msg.Root().Array()
	}
	for _, m := range members {
		id := m.Get("id")
		key := envelope.IDKey(id)
		if !wellFormedServerMessage(m) {
			// An Invalid Request (JSON-RPC §5): its error's id is null
			// even where the id could be read (review rev92).
			c.unreadable = true
		}
		switch {
		case key == "" || !m.Get("method").Exists():
		case len(c.asked) >= maxOpen:
			// Past the bound the request is not known: what answers or
			// follows it is no longer judged as if it were (review rev58).
			c.lost = true
		default:
			c.asked[key] = asked{method: m.Get("method").Str, mode: m.Get("params.mode").Str, task: envelope.AsksTask(m),
				token: envelope.IDKey(m.Get("params._meta.progressToken")), taskID: m.Get("params.taskId").Str, id: id, seq: r.Seq}
		}
	}
}

// Close takes in the end of a client request's exchange.
func (t *ClientTracker) Close(e *Closed) {
	if t.notMCP[e.Request] {
		delete(t.notMCP, e.Request)
		return
	}
	c := t.conversationOf(e.Request)
	if c == nil {
		return
	}
	if _, ok := t.byRequest[e.Request]; ok && !t.gets[e.Request] {
		t.finished = append(t.finished, e.Request)
		if len(t.finished) > 2*maxOpen {
			t.finished = t.live(t.finished)
		}
	}
	if c.carried[e.Request] {
		delete(c.carried, e.Request)
		if e.Status == http.StatusNotFound && c.gone == 0 && !readInSession(e) {
			// The server ended the session: the client starts a new one
			// with an initialize without the id (transports, Session
			// Management item 4). (A 404 whose answer only the request's
			// method could give, a method not found so mapped, was read
			// in the session.)
			c.gone = e.Request
		}
	}
	if t.deletes[e.Request] {
		delete(t.deletes, e.Request)
		if e.Status/100 == 2 && c.ended == 0 {
			c.ended = e.Request
		}
	}
	c.mrtrClosed(e)
	answered := c.posting[e.Request]
	delete(c.posting, e.Request)
	if key, ok := c.open[e.Request]; ok {
		delete(c.open, e.Request)
		if c.inFlight[key]--; c.inFlight[key] <= 0 {
			delete(c.inFlight, key)
		}
	}
	switch {
	case refusedAtHTTP(e):
		// It never entered the session: the ids it used (a batch's
		// members' too) were not used in it, the answers it carried
		// answered nothing, and the client may send them again (the
		// TypeScript SDK re-sends the same message once it has
		// refreshed its token after a 401, or stepped up its scope after
		// a 403).
		c.forget(e.Request)
		c.unanswer(e.Request, answered)
	case failedAtHTTP(e):
		// A 5xx without the request's answer: the server, or a gateway
		// before it, failed, perhaps after the request ran. Whether its
		// ids were used in the session is not known.
		c.doubt(e.Request)
	}
	if nc, ok := t.reinits[e.Request]; ok {
		delete(t.reinits, e.Request)
		if res := gjson.GetBytes(e.Answer, "result"); res.IsObject() && e.Status/100 == 2 && e.SessionID != "" && e.SessionID != c.sessionID {
			nc.initDone, nc.version = true, res.Get("protocolVersion").Str
			if caps := res.Get("capabilities"); caps.IsObject() {
				nc.serverCaps = json.RawMessage(caps.Raw)
			}
			nc.sessionID = e.SessionID
			t.issue(e.SessionID, nc)
		}
		return
	}
	if e.Request == c.initSeq && t.initializing == c {
		t.initializing = nil // answered: keyed below, or refused
	}
	if e.Request == c.initSeq && c.initSeq != 0 {
		res := gjson.GetBytes(e.Answer, "result")
		if !res.IsObject() || e.Status != 0 && e.Status/100 != 2 {
			// Refused (a version the server does not serve answered
			// -32602, as the spec's own example does, AMB-3) or left
			// unanswered: nothing was negotiated, and the client's next
			// initialize, with capabilities of its own, is the one that
			// counts.
			if c.initKey != "" && !refusedAtHTTP(e) && len(c.refusedInit) < maxUsedIDs {
				if c.refusedInit == nil {
					c.refusedInit = map[string]bool{}
				}
				c.refusedInit[c.initKey] = true
			}
			c.initFailed, c.initSeq, c.initKey, c.caps, c.capsKnown = c.initSeq, 0, "", nil, false
			if t.stdio == nil {
				t.refused = c
			}
			return
		}
		c.initDone, c.version = true, res.Get("protocolVersion").Str
		if caps := res.Get("capabilities"); caps.IsObject() {
			c.serverCaps = json.RawMessage(caps.Raw)
		}
		if t.stdio == nil {
			// HTTP: the session is known now, by its id or as the
			// sessionless one.
			if e.SessionID != "" {
				c.sessionID = e.SessionID
				t.issue(e.SessionID, c)
			} else {
				// Every client without a session lands here: the relay
				// cannot tell them apart.
				c.stateless = true
				t.sessionless = c
				t.sessionlessInits++
				if !slices.Contains(t.sessionlessVersions, c.version) && len(t.sessionlessVersions) < maxConversation {
					t.sessionlessVersions = append(t.sessionlessVersions, c.version)
				}
			}
		}
	}
}

// refusedAtHTTP: the HTTP layer refused the request before any MCP code
// took it (envelope.RefusedAtHTTP).
func refusedAtHTTP(e *Closed) bool {
	return envelope.RefusedAtHTTP(e.Status, e.Answer)
}

// failedAtHTTP: the exchange ended with a 5xx and no JSON-RPC response to
// the request: a server's or a gateway's failure, which may come after
// the request ran (a 504 of a gateway that timed out, a crash handler's
// error with a null id).
func failedAtHTTP(e *Closed) bool {
	return e.Status/100 == 5 && !envelope.AnsweredByID(e.Answer)
}

// readInSession: the exchange's answer is a result, or an error only a
// reader of the request's method gives (methodCode): the session held it.
func readInSession(e *Closed) bool {
	if !gjson.ValidBytes(e.Answer) {
		return false
	}
	a := gjson.ParseBytes(e.Answer)
	return a.IsObject() && (a.Get("result").Exists() || methodCode(a.Get("error.code").Int()))
}

// forget takes back the use of key by request seq, which never entered
// the session (the HTTP layer refused it): its id is free. (An initialize
// the server refused with a JSON-RPC error was read by MCP code: whether
// its id belongs to the session that follows is open, refusedInit.)
func (c *conversation) forget(seq uint64) {
	for key, first := range c.used {
		if first == seq {
			delete(c.used, key)
		}
	}
}

// doubt marks the ids request seq used as ones whose use in the session
// is not known (failedAtHTTP): a reuse of one warns.
func (c *conversation) doubt(seq uint64) {
	for key, first := range c.used {
		if first == seq && len(c.doubted) < maxUsedIDs {
			if c.doubted == nil {
				c.doubted = map[string]bool{}
			}
			c.doubted[key] = true
		}
	}
}

// Lost takes in that n messages were not observed (the relay's output
// fell behind): the history of every conversation so far is incomplete.
func (t *ClientTracker) Lost(n int64) {
	if n <= 0 {
		return
	}
	for _, c := range t.all() {
		c.lost = true
	}
}

func (t *ClientTracker) all() []*conversation {
	out := []*conversation{t.stdio, t.sessionless, t.unseen, t.detached, t.modern}
	for _, c := range t.sessions {
		out = append(out, c)
	}
	for _, c := range t.byRequest {
		out = append(out, c)
	}
	return slicesDeleteNil(out)
}

func slicesDeleteNil(cs []*conversation) []*conversation {
	out := cs[:0]
	for _, c := range cs {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// sessionList names the issued sessions for a finding.
func sessionList(ids []string) string {
	if len(ids) > 3 {
		return strings.Join(ids[len(ids)-3:], ", ") + " (the last 3)"
	}
	return strings.Join(ids, ", ")
}

// wellFormedServerMessage: m is a request or a notification a client
// reads whole: an object with jsonrpc "2.0", a string method, an id (if
// any) that is a string or an integer, and params (if any) structured.
func wellFormedServerMessage(m gjson.Result) bool {
	if !m.IsObject() || m.Get("jsonrpc").Str != "2.0" || m.Get("method").Type != gjson.String {
		return false
	}
	if id := m.Get("id"); id.Exists() && id.Type != gjson.String && !(id.Type == gjson.Number && envelope.PlainInteger(id.Raw)) {
		return false
	}
	params := m.Get("params")
	return !params.Exists() || params.IsObject() || params.IsArray()
}
