package schema

import (
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wymcp/wymcp-check/envelope"
)

//go:embed protocol/*.json
var protocolFiles embed.FS

// Versions lists the protocol versions this package has every schema
// for (replies, a client's messages, tool schemas' default dialect),
// newest first.
func Versions() []string {
	return []string{"2026-07-28", "2025-11-25", "2025-06-18"}
}

// ReplyVersions lists the protocol versions whose replies and
// server-sent messages a [Registry] validates, newest first: Versions
// and 2025-03-26, whose server the checker judges under 2025-06-18's
// rules where the two do not differ (T-V0326-4), but whose replies are
// held to its own types. (The checker carries no client-side schema of
// 2025-03-26, so it is not one of Versions.)
func ReplyVersions() []string {
	return append(Versions(), "2025-03-26")
}

// A Registry compiles the schemas of each protocol version on first use
// and keeps them for the life of the Registry. It is safe for concurrent
// use. Create one per process (or per test) with NewRegistry.
type Registry struct {
	sets map[string]*lazySet // fixed at NewRegistry; only the lazySets change
}

type lazySet struct {
	once sync.Once
	set  *Set
	err  error
}

// NewRegistry returns a Registry that has compiled nothing yet.
func NewRegistry() *Registry {
	r := &Registry{sets: map[string]*lazySet{}}
	for _, v := range ReplyVersions() {
		r.sets[v] = &lazySet{}
	}
	return r
}

// Version returns the compiled schemas of protocol version v, compiling
// them on the first call for v. An unknown version is an error.
func (r *Registry) Version(v string) (*Set, error) {
	ls, ok := r.sets[v]
	if !ok {
		return nil, fmt.Errorf("schema: unknown protocol version %q (known: %s)", v, strings.Join(ReplyVersions(), ", "))
	}
	ls.once.Do(func() { ls.set, ls.err = compileSet(v) })
	return ls.set, ls.err
}

// Warm starts compiling the schemas of versions beside the caller's
// work, each in a goroutine of its own, and returns at once: a run that
// knows which versions it may judge has them compiled while it waits
// for the server's first replies, not after. Version waits for a
// compile under way instead of starting another. Unknown versions are
// left to Version to refuse.
func (r *Registry) Warm(versions ...string) {
	for _, v := range versions {
		if _, ok := r.sets[v]; ok {
			go r.Version(v)
		}
	}
}

// A Set is the compiled reply schemas of one protocol version. It is
// immutable and safe for concurrent use.
type Set struct {
	version string
	replies map[string]*jsonschema.Schema // method → its result response
	// taskReplies: method → the reply to a task-augmented request of it
	taskReplies map[string]*jsonschema.Schema
	// messages: method → the whole notification or request a server
	// sends besides its response
	messages map[string]*jsonschema.Schema
	result   *jsonschema.Schema // result response of a method not in replies
	error    *jsonschema.Schema // error response, any method
	covers   map[string]bool
}

// Version is the protocol version the Set validates.
func (s *Set) Version() string { return s.version }

// Methods lists, sorted, the methods whose results the Set knows.
func (s *Set) Methods() []string {
	out := make([]string, 0, len(s.replies))
	for m := range s.replies {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Covers reports whether the Set's schema claims to cover the official
// $defs type defName of its version: it defines a type of that name that
// the differential tests compare with the official one.
func (s *Set) Covers(defName string) bool { return s.covers[defName] }

// ValidateReply validates raw, a whole JSON-RPC reply to a request of
// method. A reply with an error member is validated as an error response
// (for any method); otherwise as a result response whose result is the
// method's result type. For a method the Set does not know only the
// envelope and the generic result are checked. method may name a
// task-augmented request ([TaskAugmented]). It returns nil when the
// reply is valid, and an error (ErrBeyondBounds) when the checker does
// not validate it.
func (s *Set) ValidateReply(method string, raw []byte) ([]envelope.DistilledEntry, error) {
	v, bad, err := decodeMessage(raw)
	if bad != nil || err != nil {
		return bad, err
	}
	return Distill(s.pick(method, v).Validate(v)), nil
}

func (s *Set) pick(method string, v any) *jsonschema.Schema {
	if obj, ok := v.(map[string]any); ok {
		if _, isError := obj["error"]; isError {
			return s.error
		}
	}
	if base, ok := strings.CutSuffix(method, taskSuffix); ok {
		if sch, ok := s.taskReplies[base]; ok {
			return sch
		}
		method = base
	}
	if sch, ok := s.replies[method]; ok {
		return sch
	}
	return s.result
}

// taskSuffix marks a method key as a task-augmented request's.
const taskSuffix = "#task"

// TaskAugmented is the method to validate the reply to a task-augmented
// request of method under: one whose params carry task (2025-11-25,
// tasks.mdx). Its reply is the version's task reply for method where the
// version defines one (a tools/call answers a CreateTaskResult, or, from a
// server that did not declare task support for it and so processed it
// normally, its CallToolResult), and method's own reply otherwise: a
// version without tasks, or a method no receiver may run as a task,
// ignores the task member.
func TaskAugmented(method string) string { return method + taskSuffix }

// ServerMethods lists, sorted, the methods of the notifications and
// requests a server sends besides its response that the Set knows: only
// those its version defines (no requests in 2026-07-28).
func (s *Set) ServerMethods() []string {
	out := make([]string, 0, len(s.messages))
	for m := range s.messages {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// ValidateServerMessage validates raw, one whole message the server sent
// besides its response (a notification, or a request to the client), as
// the message of method. covered is false when the Set knows no such
// method, which is nothing to validate rather than an error: a server may
// send an extension's notifications. Otherwise it returns the distilled
// problems, nil when the message is valid, and an error
// (ErrBeyondBounds) when the checker does not validate it.
func (s *Set) ValidateServerMessage(method string, raw []byte) (problems []envelope.DistilledEntry, covered bool, err error) {
	sch, ok := s.messages[method]
	if !ok {
		return nil, false, nil
	}
	v, bad, err := decodeMessage(raw)
	if bad != nil || err != nil {
		return bad, true, err
	}
	return Distill(sch.Validate(v)), true, nil
}

// decodeMessage decodes a message for validation. A message that is not
// JSON is one problem at its root (bad); one beyond the checker's bounds
// is an error: it could not be judged.
func decodeMessage(raw []byte) (v any, bad []envelope.DistilledEntry, err error) {
	v, err = decode(raw)
	switch {
	case errors.Is(err, ErrBeyondBounds):
		return nil, nil, err
	case err != nil:
		return nil, []envelope.DistilledEntry{{Location: "", Problems: []string{err.Error()}}}, nil
	}
	return v, nil, nil
}
