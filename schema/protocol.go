package schema

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Names every protocol file defines; the reply table x-wymcp-replies maps
// methods to further $defs, x-wymcp-task-replies maps methods to the $defs
// type of the reply to a task-augmented request of that method (one whose
// params carry task), and x-wymcp-server-messages maps the methods of the
// notifications and requests a server sends besides its response to the
// $defs type of the whole message.
const (
	defResultResponse = "resultReply"
	defErrorResponse  = "errorReply"
	repliesKey        = "x-wymcp-replies"
	taskRepliesKey    = "x-wymcp-task-replies"
	serverMessagesKey = "x-wymcp-server-messages"
)

// protocolDoc is one embedded protocol file, parsed.
type protocolDoc struct {
	version string
	url     string
	doc     map[string]any
	replies map[string]string
	// taskReplies maps a method to the reply of a task-augmented request.
	taskReplies map[string]string
	// messages maps a server-sent message's method to its $defs type.
	messages map[string]string
	defs     map[string]any
}

func loadProtocol(version string) (*protocolDoc, error) {
	name := "protocol/" + version + ".json"
	raw, err := protocolFiles.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", name, err)
	}
	v, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", name, err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema: %s: not a json object", name)
	}
	defs, _ := doc["$defs"].(map[string]any)
	replies, err := methodTable(doc, defs, repliesKey)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", name, err)
	}
	taskReplies, err := methodTable(doc, defs, taskRepliesKey)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", name, err)
	}
	messages, err := methodTable(doc, defs, serverMessagesKey)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", name, err)
	}
	return &protocolDoc{
		version:     version,
		url:         "mem://wymcp/protocol/" + version + ".json",
		doc:         doc,
		replies:     replies,
		taskReplies: taskReplies,
		messages:    messages,
		defs:        defs,
	}, nil
}

// methodTable reads the table under key, method → $defs name; a name
// that is not in defs is an error. An absent table is empty.
func methodTable(doc, defs map[string]any, key string) (map[string]string, error) {
	table, _ := doc[key].(map[string]any)
	out := make(map[string]string, len(table))
	for m, d := range table {
		def, ok := d.(string)
		if !ok || defs[def] == nil {
			return nil, fmt.Errorf("%s: method %q names no $defs entry", key, m)
		}
		out[m] = def
	}
	return out, nil
}

// compiler returns a compiler holding the document, ready for
// compileDef.
func (p *protocolDoc) compiler() (*jsonschema.Compiler, error) {
	c := newCompiler(jsonschema.Draft2020)
	// The two formats the project's own schemas use, and assert: the
	// official schemas mark image and audio data and resource blobs as
	// Base64 ("byte"), a MUST of their meaning, which 2020-12 leaves an
	// annotation; and a URL-mode elicitation's url as "uri", which the
	// spec's prose makes a MUST (a valid URL). Resource URIs stay free:
	// real servers name resources by templates and custom schemes. Tool
	// schemas, the server's own, keep formats as annotations (AMB-15).
	c.RegisterFormat(&jsonschema.Format{Name: formatBase64, Validate: base64Text})
	c.AssertFormat()
	if err := c.AddResource(p.url, p.doc); err != nil {
		return nil, fmt.Errorf("schema: protocol %s: %w", p.version, err)
	}
	return c, nil
}

func (p *protocolDoc) compileDef(c *jsonschema.Compiler, def string) (*jsonschema.Schema, error) {
	sch, err := c.Compile(p.url + "#/$defs/" + def)
	if err != nil {
		return nil, fmt.Errorf("schema: protocol %s: compile %s: %w", p.version, def, err)
	}
	return sch, nil
}

// claims lists the $defs that claim an official type: by this package's
// convention their names start with an upper-case letter.
func (p *protocolDoc) claims() map[string]bool {
	out := map[string]bool{}
	for name := range p.defs {
		if r := []rune(name); len(r) > 0 && unicode.IsUpper(r[0]) {
			out[name] = true
		}
	}
	return out
}

func compileSet(version string) (*Set, error) {
	p, err := loadProtocol(version)
	if err != nil {
		return nil, err
	}
	c, err := p.compiler()
	if err != nil {
		return nil, err
	}
	s := &Set{version: version, replies: map[string]*jsonschema.Schema{}, taskReplies: map[string]*jsonschema.Schema{}, messages: map[string]*jsonschema.Schema{}, covers: p.claims()}
	if s.result, err = p.compileDef(c, defResultResponse); err != nil {
		return nil, err
	}
	if s.error, err = p.compileDef(c, defErrorResponse); err != nil {
		return nil, err
	}
	for m, def := range p.replies {
		if s.replies[m], err = p.compileDef(c, def); err != nil {
			return nil, err
		}
	}
	for m, def := range p.taskReplies {
		if s.taskReplies[m], err = p.compileDef(c, def); err != nil {
			return nil, err
		}
	}
	for m, def := range p.messages {
		if s.messages[m], err = p.compileDef(c, def); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// formatBase64 is the format the project's schemas give Base64 text.
const formatBase64 = "base64"

// base64Text accepts a string that decodes as RFC 4648 Base64 in either
// alphabet, padded or not (DESIGN: a Base64 alphabet the spec does not
// name is the reader's latitude), line breaks skipped as decoders do; a
// mix of both alphabets decodes in neither. It decodes as it reads, so a
// blob of megabytes costs no copy.
func base64Text(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if !strings.Contains(s, "=") {
		enc = enc.WithPadding(base64.NoPadding)
	}
	if _, err := io.Copy(io.Discard, base64.NewDecoder(enc, strings.NewReader(s))); err != nil {
		return errors.New("not Base64")
	}
	return nil
}
