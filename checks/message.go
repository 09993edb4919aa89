package checks

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// needMessage guards checks that read error.message as a string.
func needMessage(p *Pass) (gjson.Result, string, error) {
	e, err := needError(p)
	if err != nil {
		return e, "", err
	}
	m := p.Reply.Response.Get("error.message")
	if m.Type != gjson.String {
		return e, "", Skip("error.message is not a string (see RPC1005)")
	}
	return e, m.Str, nil
}

var MessageOneLine = &Check{
	ID:       "ERR2001",
	Title:    "The error message is one non-empty line",
	SpecRef:  "T-RPC-8 (SHOULD be one short sentence); contract clause 2",
	Severity: MUST,
	Area:     AreaMessage,
	Doc: `error.message is the one-line cause: not empty (format characters
alone, such as a zero-width space, show nothing and count as empty), no line break (CR, LF,
NEL, U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR all end a line for
some reader), no other control character (a terminal escape in a message reaches the user's
screen and the calling model's context), Unicode's bidirectional
overrides among them (U+202D, U+202E: they reverse what is shown, so the
text read is not the text sent), and an embedding or isolate left open,
or a closer with nothing to close (U+202A–U+202C, U+2066–U+2069), which
reorders the line around the message. A balanced pair passes: it is how
Unicode has text of unknown direction inserted (Project Fluent wraps
every value so) and reorders nothing outside itself; so do right-to-left
letters and the direction marks U+200E, U+200F and U+061C. Clients render message; a stack
trace or pretty-printed JSON in it is unreadable there.

Under --contract spec this only warns: the spec says a message SHOULD be
one short sentence.`,
	Run: func(p *Pass) error {
		_, msg, err := needMessage(p)
		if err != nil {
			return err
		}
		switch {
		case blank(msg):
			p.Contractf(true, "error.message", "message is empty")
		case hasLineBreak(msg):
			p.Contractf(true, "error.message", "message spans %d lines: %s", lineCount(msg), Quote(msg, quoteN))
		case hasControl(msg) && (p.Contract.IsStrict() || bareControlAt(msg) >= 0):
			// A tab breaks the contract's one clean line, but no rule of
			// the spec: under --contract spec only the other controls warn.
			p.Contractf(true, "error.message", "message contains control characters: %s", Quote(msg, quoteN))
		case !utf8.ValidString(msg):
			p.Contractf(true, "error.message", "message is not valid UTF-8")
		}
		return nil
	},
}

var MessageConcise = &Check{
	ID:       "ERR2002",
	Title:    "The error message is concise",
	SpecRef:  "T-RPC-8 (one short sentence); contract clause 2",
	Severity: MUST,
	Area:     AreaMessage,
	Doc: `error.message stays within the contract's length bound (messageMax,
160 characters by default): a cause a person reads at a glance and a
calling model acts on. Detail belongs in structured data keys, not in a
paragraph. Under --contract spec an overlong message only warns. A message
of several sentences warns under either contract: the spec asks for one
short sentence (T-RPC-8, a SHOULD); an abbreviation's period and the
punctuation of what it quotes end no sentence.`,
	Run: func(p *Pass) error {
		_, msg, err := needMessage(p)
		if err != nil {
			return err
		}
		if n := length(msg, p.Contract.MessageMax); n != "" {
			p.Contractf(true, "error.message", "message is %s, over the bound of %d: %s", n, p.Contract.MessageMax, Quote(msg, quoteN))
		}
		if severalSentences(msg) {
			p.Warnf("error.message", "message is several sentences; it should be one short sentence (T-RPC-8): %s", Quote(msg, quoteN))
		}
		return nil
	},
}

var MessageNotGeneric = &Check{
	ID:         "ERR2003",
	StrictOnly: true,
	Title:      "The message states the cause, not only the generic name",
	SpecRef:    "contract clause 2",
	Severity:   MUST,
	Area:       AreaMessage,
	Doc: `The JSON-RPC generic string ("Invalid params", "Internal error", …) is
fine when there is nothing more to say, and so is "Server error" for the
range JSON-RPC reserves for implementation-defined server errors. But a
reply whose message is only
the generic string while data carries the cause hides the cause where
clients do not look: they render message, and a calling model that sees
only "Invalid params" cannot fix its call. Put the one-line cause in
message. The generic name counts in the spellings SDKs use ("Invalid
request parameters", "Internal server error", "INVALID_PARAMS"), behind
the TypeScript SDK's "MCP error -32602: " prefix or an "Error: ", and
behind the error's class name as a runtime writes an error out
("McpError: MCP error -32602: Invalid params", the TypeScript McpError
through String()), with the code after it ("Invalid params (-32602)"),
and with a pointer to data ("see data", "see details", "see errors"),
and behind that prefix twice (an error caught and thrown again).
JSON-RPC's name of another code ("Invalid Request" on a -32602) is as
generic, on any code: it names no cause either. For -32602 the MCP
schema's "Invalid arguments" said alone, "Invalid tool arguments", and a
validator's "Validation failed" or "Invalid input", name the kind of
failure and no cause: they count as the generic name too, and so does a
count of errors said with them or alone ("2 validation errors for
CallToolRequest", pydantic's; "Invalid params (2 errors)"; "Validation
failed: 2 errors"), and two generic names joined by a colon. So does,
on one of JSON-RPC's five codes (not the server error range, where MCP
defines codes whose name is the condition), any message made only of
words that say something failed and what failed in general ("Schema
validation failed", "Parameters are invalid", "Internal error
occurred", "Something went wrong"): a word of a cause ("missing",
"required", "not found", a number, an argument's name) makes it no
generic one, and so does "tool" with no other word of what failed
("Invalid tool" names the tool). A message
that goes on to state the cause passes, whatever it starts with.

"Method not found" is the whole cause when data only says back the
method the client sent (or another of its values): that passes. When
data besides lists what is supported, the message could name the
alternatives, but they are no cause: that only warns.
Strict contract only.`,
	Run: func(p *Pass) error {
		e, msg, err := needMessage(p)
		if err != nil {
			return err
		}
		// Only JSON-RPC's own names are generic: the five codes', and
		// "Server error" for its range of implementation-defined server
		// errors (-32000 to -32099, JSON-RPC §5.1). An MCP-defined name
		// such as "Unsupported protocol version" is itself the cause, and
		// its spec-defined data is structured detail, not a hidden cause.
		code := int(e.Get("code").Int())
		data := e.Get("data")
		if !data.Exists() || isEmptyValue(data) {
			return nil
		}
		name := ""
		switch {
		case jsonrpcCode(code):
			if _, row := envelope.ClassifyCode(p.Expect.Version, code, nil); row != nil {
				name = row.Name
			}
		case code >= -32099 && code <= -32000:
			name = "Server error"
		}
		// (Whatever the code, JSON-RPC's name of another one said alone,
		// "Invalid Request" on a -32602, is no cause either.)
		said := genericOnly(msg, code, name, func(w string) bool {
			// (The message is read lowercased; the arguments' names
			// are what a cause names: "payload is invalid".)
			found := false
			p.Expect.Request.Get("params.arguments").ForEach(func(k, _ gjson.Result) bool {
				found = strings.EqualFold(k.Str, w)
				return !found
			})
			return found
		})
		if said == "" {
			return nil
		}
		if code == envelope.CodeMethodNotFound || said == methodNotFound {
			// "Method not found" is the whole cause when data only says
			// back the method the client sent: it hides nothing. A list
			// of what is supported is no cause either, but more the
			// message could say: whether that is "more to say", the
			// contract does not settle. (Said by the code or by the
			// words: data that only restates the request hides no cause
			// whichever names the condition, and a code that does not
			// fit the words is ERR1002's.)
			switch restated, alternatives := methodData(p, data); {
			case restated:
				return nil
			case alternatives:
				p.Warnf("error.message", "message is only the generic %s while error.data lists what is supported; the message could name them", Quote(msg, quoteN))
				return nil
			}
		}
		p.Failf("error.message", "message is only the generic %s while error.data carries the cause", Quote(msg, quoteN))
		return nil
	},
}

// methodData reads a -32601's data: restated when its every value says
// back what the request carried (its method, a quote of its values);
// alternatives when, besides those, it only lists strings under
// supported (the methods served). Anything else (a reason, prose, a
// distilled list) may be the cause, and neither holds.
func methodData(p *Pass, data gjson.Result) (restated, alternatives bool) {
	method := p.Expect.Request.Get("method").Str
	own := func(v gjson.Result) bool {
		return v.Type == gjson.String && (v.Str == method && method != "" || quotesRequest(p, v.Str))
	}
	if !data.IsObject() {
		// The Python SDK's data "no/such_method", bare (review rev74):
		// the method said back, as in an object; the shape is ERR3001's.
		return own(data), false
	}
	restated = true
	data.ForEach(func(k, v gjson.Result) bool {
		switch {
		case own(v):
		case k.Str == "supported" && v.IsArray() && envelope.NonEmpty(v) && allStrings(v):
			alternatives = true
		default:
			restated, alternatives = false, false
			return false
		}
		return true
	})
	if alternatives {
		restated = false
	}
	return restated, alternatives
}

// allStrings: every element of the array v is a string.
func allStrings(v gjson.Result) bool {
	all := true
	v.ForEach(func(_, e gjson.Result) bool {
		all = e.Type == gjson.String
		return all
	})
	return all
}

// genericOnly is the generic name msg says and no more, lowercased, ""
// when it says more: the generic name of code (name, "" when the code
// has none), in any of the spellings SDKs use ("Invalid request
// parameters", "Internal server error", an enum's INVALID_PARAMS), or
// JSON-RPC's name of another code ("Invalid Request" on a -32602), behind
// a prefix naming the error, its class or its code, before the code, or
// with a pointer to where the cause went ("see data", "see errors").
func genericOnly(msg string, code int, name string, member func(string) bool) string {
	m := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(msg)), "_", " ") // INVALID_PARAMS, an enum's name
	// What rewritesToGeneric leaves is a run of m (a prefix and a suffix
	// cut off): a message where no spelling of the name stands so is no
	// generic one, and most messages are spared the expressions.
	name = strings.ToLower(name)
	if sm := codeOnly.FindStringSubmatch(m); sm != nil && sm[1] == strconv.Itoa(-code) {
		// The code alone ("Error -32602") names it no better than its
		// name does.
		said := name
		eachGeneric(code, name, func(g string) bool { said = g; return false })
		return said
	}
	if !strings.ContainsRune(m, ' ') {
		// A class's or an enum's name, its words run together
		// ("InvalidParams", "ValidationError").
		joined := strings.TrimRight(m, " .!:;")
		said := ""
		eachGeneric(code, name, func(g string) bool {
			if strings.ReplaceAll(g, " ", "") == joined {
				said = g
			}
			return said == ""
		})
		if said != "" {
			return said
		}
	}
	may := false
	eachGeneric(code, name, func(g string) bool { may = mayBeOnly(m, g); return !may })
	if may {
		if said := rewritesToGeneric(m, code, name); said != "" {
			return said
		}
	}
	return countedGeneric(m, code, name, member)
}

// countedGeneric is the generic name m says when it says no more than a
// count of errors and generic names (review rev61): pydantic's "2
// validation errors for CallToolRequest", "Validation failed: 2 errors",
// "Invalid params (2 errors)", "Invalid params: validation failed". Each
// part of m (between colons, semicolons, commas, dashes or full stops,
// see partBreak) is a generic name or a count; the count of a -32602's
// validation errors is as generic as its name. "" when a part says
// more.
func countedGeneric(m string, code int, name string, member func(string) bool) string {
	m = sdkPrefix.ReplaceAllString(m, "")
	m = pointerToData.ReplaceAllString(m, "")
	m = errorCountTail.ReplaceAllString(m, "")
	said, counted := "", false
	for _, part := range partBreak.Split(m, -1) {
		part = strings.TrimSpace(strings.TrimRight(part, " .!;…"))
		// (A number alone counts only after the word it counts,
		// "errors: 2"; after a name it is a value: "Invalid params: 99".)
		wasCount := counted
		counted = false
		switch {
		case part == "":
		case code == envelope.CodeInvalidParams && (errorCount.MatchString(part) || wasCount && bareCount.MatchString(part)):
			counted = true
			if said == "" {
				said = "validation errors"
			}
		default:
			g := rewritesToGeneric(part, code, name)
			if g == "" && jsonrpcCode(code) && genericWords(part, member) {
				g = part
			}
			if g == "" {
				return ""
			}
			said = g
		}
	}
	return said
}

// genericWords: part, lowercased, is made only of words that name a
// failure in general, what failed in general (the request, its params,
// input or value, a validation, the server) and words that join them,
// with one word of failure at least: "Schema validation failed",
// "Parameters are invalid", "Internal error occurred", "Something went
// wrong" (review rev83: only the listed spellings counted, and any
// other wording of the same nothing passed). A word of a cause
// ("missing", "required", "found", a number) makes it no generic
// message, and so does the name of one of the request's arguments
// (member), which names what is wrong ("payload is invalid" of an
// argument payload; review rev86); "tool" says what failed only beside
// another such word ("tool input"): "Invalid tool" names the tool as
// the cause. "Unknown" says nothing only before a word of failure
// ("Unknown error"; review rev86); elsewhere it names the cause
// ("Unknown argument", "Invalid or unknown parameter"; review rev92).
// Applied to JSON-RPC's own codes only (see jsonrpcCode).
func genericWords(part string, member func(string) bool) bool {
	failure, tool, subject := false, false, false
	words := strings.FieldsFunc(part, func(r rune) bool { return r == ' ' || r == '\t' })
	for i, w := range words {
		w = strings.Trim(w, ".,!?()[]'\"`")
		if member != nil && member(w) {
			return false
		}
		if w == "unknown" {
			// "Unknown error", "Unknown internal error" say nothing;
			// "unknown parameter" names the cause, as "missing parameter"
			// does (reviews rev92, rev94).
			if i+1 < len(words) && unknownThing[strings.Trim(words[i+1], ".,!?()[]'\"`")] {
				return false
			}
			continue
		}
		switch genericVocabulary[w] {
		case 0:
			return false
		case failureWord:
			failure = true
		case subjectWord:
			subject = true
		case toolWord:
			tool = true
		}
	}
	return failure && (!tool || subject)
}

// jsonrpcCode: code is one of JSON-RPC's five (-32700, -32600 to
// -32603). The server error range holds codes MCP defines (-32002,
// -32042), whose name is itself the condition.
func jsonrpcCode(code int) bool {
	return code == envelope.CodeParseError || code >= envelope.CodeInternalError && code <= envelope.CodeInvalidRequest
}

const (
	joinWord = iota + 1
	failureWord
	subjectWord
	toolWord
)

// genericVocabulary holds the words genericWords allows: failureWord
// for those that say something went wrong, subjectWord for what failed
// in general, toolWord for "tool", joinWord for the rest.
var genericVocabulary = func() map[string]int {
	m := map[string]int{"tool": toolWord}
	for _, w := range strings.Fields("invalid failed failure fails error errors occurred occured wrong bad unexpected problem problems issue issues exception unable malformed") {
		m[w] = failureWord
	}
	for _, w := range strings.Fields("request params parameters parameter param arguments argument args input inputs data value values payload body call schema " +
		"validation validating internal server something operation execution") {
		m[w] = subjectWord
	}
	for _, w := range strings.Fields("a an the one or more some this your has have had was were is are be been not could cannot went " +
		"provided given supplied received encountered while during for of in with on to process processed processing handle handling") {
		m[w] = joinWord
	}
	return m
}()

// unknownThing are the words after "unknown" that name what is wrong
// (an argument the schema has not, a method): a cause, not a failure in
// general.
var unknownThing = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("param params parameter parameters argument arguments arg args input inputs value values field fields property properties key keys option options name tool tools method methods resource prompt uri") {
		m[w] = true
	}
	return m
}()

// errorCount is a count of errors said alone: "2 errors", "2 validation
// errors for CallToolRequest" (pydantic names the model, not the cause),
// "validation errors", "found 2 validation errors", "there were 2
// errors", "1 error(s)", "2 problems found".
var errorCount = regexp.MustCompile(`^(?:(?:found|there\s+(?:were|are|was|is))\s+)?(?:\d+\s+)?(?:validation\s+)?(?:errors?|error\(s\)|issues?|problems?)(?:\s+(?:found|occurred))?(?:\s+for\s+(?:tool\s+)?\w+)?$`)

// bareCount is a number said alone after the count's word ("errors: 2").
var bareCount = regexp.MustCompile(`^\d+$`)

// errorCountTail is a count at the end, in brackets or after "with":
// "(2 errors)", "with 2 errors".
var errorCountTail = regexp.MustCompile(`(?:\s*[(\[]|\s+with\s+)\d+\s+(?:validation\s+)?(?:errors?|error\(s\)|issues?|problems?)[)\]]?\s*$`)

// partBreak separates the parts of a message that may each be generic:
// a colon, a semicolon, a comma, a dash between spaces, a full stop.
var partBreak = regexp.MustCompile(`[:;,]|\s[-–—]\s|\.\s`)

// rewritesToGeneric is the generic name m, lowercased, is once a prefix,
// a pointer to data and the code itself are cut off (see eachGeneric);
// "" when it is none.
func rewritesToGeneric(m string, code int, name string) string {
	m = sdkPrefix.ReplaceAllString(m, "")
	m = pointerToData.ReplaceAllString(m, "")
	if sm := codeSuffix.FindStringSubmatchIndex(m); sm != nil && strings.TrimPrefix(m[sm[2]:sm[3]], "-") == strconv.Itoa(-code) {
		// (Only the error's own code: another number names a value.)
		m = m[:sm[0]]
	}
	m = strings.TrimRight(m, " .!:;…—–-")
	said := ""
	eachGeneric(code, name, func(g string) bool {
		if m == g {
			said = g
		}
		return said == ""
	})
	return said
}

// eachGeneric calls fn with each text, lowercased, that a message of code
// says alone to say only a generic name, until fn returns false: the
// code's own name (name, lowercased; none when ""), its other spellings,
// and JSON-RPC's names of the other four codes, which are generic
// whatever code carries them: a calling model that reads "Invalid
// Request" on a -32602 learns no more of the cause than from "Invalid
// params" (it learns less).
func eachGeneric(code int, name string, fn func(g string) bool) {
	if name != "" && !fn(name) {
		return
	}
	for _, g := range genericSpellings[code] {
		if !fn(g) {
			return
		}
	}
	for _, c := range jsonrpcNames {
		if c.code != code && !fn(c.name) {
			return
		}
	}
}

// jsonrpcNames are JSON-RPC's generic names of its five codes (the code
// table's strings, -32700 and -32600 to -32603), lowercased.
var jsonrpcNames = func() (out []codeName) {
	for _, c := range []int{envelope.CodeParseError, envelope.CodeInvalidRequest, envelope.CodeMethodNotFound, envelope.CodeInvalidParams, envelope.CodeInternalError} {
		_, row := envelope.ClassifyCode(envelope.V20251125, c, nil)
		out = append(out, codeName{c, strings.ToLower(row.Name)})
	}
	return out
}()

// A codeName is a code and its generic name.
type codeName struct {
	code int
	name string
}

// methodNotFound is -32601's name, as genericOnly returns it.
var methodNotFound = jsonrpcNames[slices.IndexFunc(jsonrpcNames, func(c codeName) bool { return c.code == envelope.CodeMethodNotFound })].name

// mayBeOnly: m may be g alone once the rewriting of genericOnly is done.
// It is what that rewriting needs, read without the expressions, whose
// cost is paid by most error messages a run sees: g stands in m with
// nothing before it but a prefix, which says "error", and nothing after
// it but punctuation, a code (digits), or a pointer to data (which says
// "see", "check", "detail" or " in"). A code may stand before it too
// ("[-32602] Invalid params").
func mayBeOnly(m, g string) bool {
	for from := 0; ; {
		i := strings.Index(m[from:], g)
		if i < 0 {
			return false
		}
		at := from + i
		head, tail := m[:at], m[at+len(g):]
		if (head == "" || strings.Contains(head, "error") || strings.ContainsAny(head, "0123456789")) &&
			(strings.TrimRight(tail, " .!:;…—–-") == "" || strings.ContainsAny(tail, "0123456789") ||
				strings.Contains(tail, "see") || strings.Contains(tail, "check") || strings.Contains(tail, "detail") || strings.Contains(tail, " in")) {
			return true
		}
		from = at + 1
	}
}

// sdkPrefix is a rendering of the error's code or kind in front of its
// message: the TypeScript SDK's "MCP error -32602: ", and "Error: ",
// "JSON-RPC error -32602: ", once or more (an McpError caught and thrown
// again is prefixed again), and the error's class name as a runtime
// writes an error out ("McpError: MCP error -32602: …" is the TypeScript
// SDK's McpError through String(e), "ValueError: " Python's).
var sdkPrefix = regexp.MustCompile(`^(?:(?:(?:mcp|json-?rpc)\s+)?\w*error(?:\s+-?\d+)?:\s*|[\[(]-?\d{5}[)\]]\s*)+`)

// codeOnly is a message that is the error's code and no more: "Error
// -32602", "[-32602]", "MCP error -32602."
var codeOnly = regexp.MustCompile(`^(?:(?:mcp|json-?rpc)\s+)?(?:error\s*)?(?:code\s*)?[\[(]?-(\d{5})[)\]]?[\s.!]*$`)

// codeSuffix is the code written after the name: "Invalid params
// (-32602)", "[-32602]", "- -32602".
var codeSuffix = regexp.MustCompile(`[\s,:(\[—–-]*(?:code\s*)?(-?\d{5})[)\]]?\s*$`)

// pointerToData is a message's pointer to data, where the cause went:
// "(see data)", ", see error.data for details", "(details in data)", and
// to data's own list by its name: "(see errors)", "see the error list".
var pointerToData = regexp.MustCompile(`[\s,;:(\[—–-]*\b(?:(see|check|details?( are)? in|more in|info in|cause in)\s+(the\s+)?((error[.\s]?)?data|errors|error\s+list)\b[\w\s.]{0,24}|(see|check)\s+(the\s+)?(details|below))[)\]]?[\s.!]*$`)

// genericSpellings are the other spellings of the JSON-RPC names. For
// -32602 they include the MCP schema's own words for it ("Invalid
// arguments", said without the tool and the cause it goes on to name)
// and a validator's words that name the kind of failure and no more
// ("Validation failed", zod's "Invalid input"): a calling model that
// reads only them cannot fix its call any more than with "Invalid params".
var genericSpellings = map[int][]string{
	envelope.CodeInvalidParams: {"invalid parameters", "invalid parameter", "invalid request parameters", "invalid arguments", "invalid argument",
		"invalid tool arguments", "validation failed", "validation error", "invalid input",
		"input validation error", "parameter validation failed", "params validation failed",
		"validation errors", "request validation failed", "input validation failed", "invalid tool input"},
	envelope.CodeInternalError:  {"internal server error"},
	envelope.CodeInvalidRequest: {"bad request"},
}

func isEmptyValue(v gjson.Result) bool {
	switch {
	case v.Type == gjson.Null:
		return true
	case v.Type == gjson.String:
		// (Spaces state no cause either.)
		return blank(v.Str)
	case v.IsObject(), v.IsArray():
		empty := true
		v.ForEach(func(_, _ gjson.Result) bool { empty = false; return false })
		return empty
	}
	return false
}

// blank: s shows nothing: only spaces and format characters (a zero-width
// space, a word joiner, a byte order mark), which state no cause.
func blank(s string) bool {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }) == ""
}
