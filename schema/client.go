package schema

import (
	"embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wymcp/wymcp-check/envelope"
)

// The client side: what an MCP client sends (its requests and
// notifications, and its answers to the server's requests), judged when
// the checker watches a real client through proxy or wrap. The schemas
// are the project's own, one file per version beside the reply schemas,
// each entry a whole message so that a problem's location is its place
// in the message (/params/name).

//go:embed client/*.json
var clientFiles embed.FS

const (
	clientKey = "x-wymcp-client"
	// The answer to a server request the file knows no result type for,
	// and an error answer to any.
	defAnswerEnvelope = "answerEnvelope"
	defErrorAnswer    = "errorAnswer"
)

// A ClientRegistry compiles the client-side schemas of each protocol
// version on first use and keeps them for its life; safe for concurrent
// use.
type ClientRegistry struct {
	sets map[string]*lazyClientSet // fixed at NewClientRegistry
}

type lazyClientSet struct {
	once sync.Once
	set  *ClientSet
	err  error
}

// NewClientRegistry returns a ClientRegistry that has compiled nothing yet.
func NewClientRegistry() *ClientRegistry {
	r := &ClientRegistry{sets: map[string]*lazyClientSet{}}
	for _, v := range Versions() {
		r.sets[v] = &lazyClientSet{}
	}
	return r
}

// Version returns the compiled client-side schemas of protocol version v.
func (r *ClientRegistry) Version(v string) (*ClientSet, error) {
	ls, ok := r.sets[v]
	if !ok {
		return nil, fmt.Errorf("schema: unknown protocol version %q (known: %s)", v, strings.Join(Versions(), ", "))
	}
	ls.once.Do(func() { ls.set, ls.err = compileClientSet(v) })
	return ls.set, ls.err
}

// A ClientSet is the compiled client-side schemas of one version;
// immutable, safe for concurrent use.
type ClientSet struct {
	version       string
	requests      map[string]*jsonschema.Schema // method → the whole request
	notifications map[string]*jsonschema.Schema
	answers       map[string]*jsonschema.Schema // the server's method → the client's result response
	taskAnswers   map[string]*jsonschema.Schema // the same, for a task-augmented request (TaskAugmented)
	answer        *jsonschema.Schema            // a result to a method not in answers; nil: clients send none
	errAnswer     *jsonschema.Schema
}

// ValidateClient validates raw, one whole message a client sent: a
// request or notification of method, or the client's answer to a server
// request of method (TaskAugmented(method) for a request whose params
// carry task). covered is false when the set has no schema for the
// message (a method the version does not define, an answer in a version
// where clients send none, a message that is not a JSON object); nil
// problems with covered true is a valid message.
func (s *ClientSet) ValidateClient(method string, raw []byte) (problems []envelope.DistilledEntry, covered bool, err error) {
	v, err := decode(raw)
	if errors.Is(err, ErrBeyondBounds) {
		return nil, false, err // could not judge, not "not covered"
	}
	if err != nil {
		return nil, false, nil // not JSON: the envelope checks say so
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false, nil
	}
	var sch *jsonschema.Schema
	_, hasMethod := obj["method"]
	_, hasID := obj["id"]
	_, isError := obj["error"]
	switch {
	case hasMethod && hasID:
		sch = s.requests[method]
	case hasMethod:
		sch = s.notifications[method]
	case isError:
		sch = s.errAnswer
	default:
		if base, ok := strings.CutSuffix(method, taskSuffix); ok {
			if sch = s.taskAnswers[base]; sch == nil {
				method = base // a version, or a method, without tasks ignores task
			}
		}
		if sch == nil {
			sch = s.answers[method]
		}
		if sch == nil {
			sch = s.answer
		}
	}
	if sch == nil {
		return nil, false, nil
	}
	return Distill(sch.Validate(v)), true, nil
}

// ClientSends reports whether a client of some version of MCP sends
// method, as a request or a notification of its client file; what a
// server sends and no client does is the server's alone.
func ClientSends(method string) bool { return clientSent()[method] }

var clientSent = sync.OnceValue(func() map[string]bool {
	sent := map[string]bool{}
	for _, v := range Versions() {
		_, tables, err := loadClient(v)
		if err != nil {
			continue // TestValidateClient fails on such a file
		}
		for _, kind := range []string{"requests", "notifications"} {
			for m := range tables[kind] {
				sent[m] = true
			}
		}
	}
	return sent
})

// loadClient reads the client-side file of version.
func loadClient(version string) (*protocolDoc, map[string]map[string]string, error) {
	name := "client/" + version + ".json"
	raw, err := clientFiles.ReadFile(name)
	if err != nil {
		return nil, nil, fmt.Errorf("schema: %s: %w", name, err)
	}
	v, err := decode(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("schema: %s: %w", name, err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("schema: %s: not a json object", name)
	}
	defs, _ := doc["$defs"].(map[string]any)
	tables := map[string]map[string]string{}
	top, _ := doc[clientKey].(map[string]any)
	for _, kind := range []string{"requests", "notifications", "answers", "taskAnswers"} {
		tables[kind] = map[string]string{}
		t, _ := top[kind].(map[string]any)
		for m, d := range t {
			def, ok := d.(string)
			if !ok || defs[def] == nil {
				return nil, nil, fmt.Errorf("schema: %s: %s.%s: method %q names no $defs entry", name, clientKey, kind, m)
			}
			tables[kind][m] = def
		}
	}
	return &protocolDoc{version: version, url: "mem://wymcp/client/" + version + ".json", doc: doc, defs: defs}, tables, nil
}

func compileClientSet(version string) (*ClientSet, error) {
	p, tables, err := loadClient(version)
	if err != nil {
		return nil, err
	}
	c, err := p.compiler()
	if err != nil {
		return nil, err
	}
	s := &ClientSet{version: version}
	for kind, dst := range map[string]*map[string]*jsonschema.Schema{"requests": &s.requests, "notifications": &s.notifications, "answers": &s.answers, "taskAnswers": &s.taskAnswers} {
		*dst = map[string]*jsonschema.Schema{}
		for m, def := range tables[kind] {
			if (*dst)[m], err = p.compileDef(c, def); err != nil {
				return nil, err
			}
		}
	}
	if p.defs[defAnswerEnvelope] != nil {
		if s.answer, err = p.compileDef(c, defAnswerEnvelope); err != nil {
			return nil, err
		}
		if s.errAnswer, err = p.compileDef(c, defErrorAnswer); err != nil {
			return nil, err
		}
	}
	return s, nil
}
