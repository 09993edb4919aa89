package envelope

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"unicode"
)

// NoCredential: a header MCP, HTTP framing or content negotiation
// defines, whose value is no credential. A --header value for one is no
// secret (a server may echo it rightly, and no one hides it), and a
// recorded header of one keeps its value: the checks read it for what it
// means (a secret "json" would turn a Content-Type into another).
func NoCredential(name string) bool {
	if _, ok := ParamHeader(name); ok {
		return true
	}
	switch http.CanonicalHeaderKey(name) {
	case "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Session-Id", "Accept", "Content-Type", "Content-Encoding",
		"Content-Length", "Transfer-Encoding", "Last-Event-Id", "Origin", "Host", "User-Agent", "X-Accel-Buffering":
		return true
	}
	return false
}

// CredentialName: a header (or, as "Query-name", an upstream URL's query
// parameter) whose name says it carries a credential: Authorization,
// Cookie, or a name holding auth, token, secret, password, credential,
// session, signature or a key. Another header's --header value may be a
// credential too, or a tenant's or a region's name, which a server may
// rightly name in an error: the checker cannot tell, so an echo of it
// warns where a credential's fails.
func CredentialName(name string) bool {
	n := strings.ToLower(name)
	n = strings.TrimPrefix(n, "query-")
	for _, w := range []string{"auth", "token", "secret", "passw", "passphrase", "credential", "cookie", "session", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(n, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		switch {
		case part == "sig", part == "pass", part == "pwd", part == "jwt", part == "bearer":
			return true
		case strings.HasSuffix(part, "key") && !notKeys[part]:
			// A key, written apart or run together (X-Api-Key,
			// X-AccessKey, which HTTP writes X-Accesskey).
			return true
		}
	}
	return false
}

// notKeys end in "key" and name no key.
var notKeys = map[string]bool{"monkey": true, "donkey": true, "turkey": true, "hockey": true, "jockey": true, "whiskey": true, "hotkey": true}

// ScrubBody is ScrubSecrets for a body or message a transcript keeps,
// which lint judges again: a secret is taken out where a server could
// have echoed it as text, and the JSON keeps its shape and meaning. In
// a JSON text (the body, a line, an event's data line) only string
// values are scrubbed: a member name stays, and so does a literal (a
// --header "X-Debug: true" turned every true into text, and lint failed
// the recording as no JSON), and a number unless it holds a secret long
// enough to judge its echo (EchoedSecret), which becomes the marker as a
// string. Any other text is scrubbed as ScrubSecrets does.
func ScrubBody(b []byte, secrets []Secret) ([]byte, []Secret) {
	sorted := scrubbable(secrets)
	if len(sorted) == 0 || len(b) == 0 {
		return b, nil
	}
	var found []Secret
	note := func(s Secret) {
		if !slices.Contains(found, s) {
			found = append(found, s)
		}
	}
	if validJSON(b) {
		return scrubJSON(b, sorted, note), found
	}
	if !bytes.Contains(b, []byte("data:")) {
		return ScrubSecrets(b, secrets)
	}
	// An event stream: each data line whose payload is JSON is scrubbed
	// as JSON, every other line as text.
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		body := bytes.TrimRight(line, "\r\n")
		if payload, ok := bytes.CutPrefix(body, []byte("data:")); ok {
			payload = bytes.TrimPrefix(payload, []byte(" "))
			if validJSON(payload) {
				at := len(body) - len(payload)
				out = append(out, body[:at]...)
				out = append(out, scrubJSON(payload, sorted, note)...)
				out = append(out, line[len(body):]...)
				continue
			}
		}
		sl, got := ScrubSecrets(line, secrets)
		for _, s := range got {
			note(s)
		}
		out = append(out, sl...)
	}
	return out, found
}

// validJSON: b is one JSON text, within the depth the checker reads.
func validJSON(b []byte) bool {
	ok, tooDeep := ValidJSON(string(b))
	return ok && !tooDeep
}

// MayBeCredential: a header value that may be a credential, so a
// secret to take out and whose echo is judged: minSecret bytes or more,
// below EchoedSecret not a plain word, and no word of the protocol's own
// (a version, a method). A short word ("true", "tools", "test") is a
// flag or a name: taken out of a recording it turned every tools/list
// into "<redacted>/list", and lint judged other messages than check had;
// and a server that names the version it speaks echoes no secret.
func MayBeCredential(v string) bool {
	word := !strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsLetter(r) })
	return len(v) >= minSecret && (len(v) >= EchoedSecret || !word) && !protocolWord(v)
}

// scrubbable are the secrets that may be credentials (MayBeCredential),
// the longest first: a token inside its "Bearer token" goes with it.
func scrubbable(secrets []Secret) []Secret {
	sorted := make([]Secret, 0, len(secrets))
	for _, s := range secrets {
		if MayBeCredential(s.Value) {
			sorted = append(sorted, s)
		}
	}
	slices.SortStableFunc(sorted, func(x, y Secret) int { return len(y.Value) - len(x.Value) })
	return sorted
}

// protocolWord: v is a protocol version or a method name of any version
// the checker knows, which every recording holds.
func protocolWord(v string) bool {
	if KnownVersion(v) || HistoricVersion(v) {
		return true
	}
	for _, ver := range Versions() {
		if slices.Contains(Methods(ver), v) {
			return true
		}
	}
	return false
}

// scrubJSON scrubs the string values of the JSON text b, and the numbers
// that hold a secret of EchoedSecret bytes or more (see ScrubBody).
func scrubJSON(b []byte, secrets []Secret, note func(Secret)) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			j := stringEnd(b, i)
			if j < 0 {
				i = len(b) // (no JSON text: see ScrubBody)
				continue
			}
			if !memberName(b, j+1) {
				if rep, ok := scrubString(b[i:j+1], bytes.IndexByte(b[i:j], '\\') >= 0, secrets, note); ok {
					out = append(append(out, b[last:i]...), rep...)
					last = j + 1
				}
			}
			i = j + 1
		case c == '-' || '0' <= c && c <= '9':
			j := i
			for j < len(b) && bytes.IndexByte([]byte("+-.0123456789eE"), b[j]) >= 0 {
				j++
			}
			for _, s := range secrets {
				if len(s.Value) >= EchoedSecret && bytes.Contains(b[i:j], []byte(s.Value)) {
					out = append(append(out, b[last:i]...), '"')
					out = append(append(out, SecretMarker(s.Name)...), '"')
					last = j
					note(s)
					break
				}
			}
			i = j
		default:
			i++
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// memberName: the string token that ends before b[k] is a member name
// (a colon follows it).
func memberName(b []byte, k int) bool {
	for ; k < len(b); k++ {
		switch b[k] {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b[k] == ':'
	}
	return false
}

// scrubString is the JSON string token tok with the secrets its text
// holds replaced by their markers, and whether it held any. A token with
// escapes is decoded, scrubbed and written anew ("sk\/live" holds
// "sk/live"); the markers need no escaping.
func scrubString(tok []byte, escaped bool, secrets []Secret, note func(Secret)) ([]byte, bool) {
	if !escaped {
		inner, changed := tok[1:len(tok)-1], false
		for _, s := range secrets {
			if bytes.Contains(inner, []byte(s.Value)) {
				inner = bytes.ReplaceAll(inner, []byte(s.Value), []byte(SecretMarker(s.Name)))
				changed = true
				note(s)
			}
		}
		if !changed {
			return tok, false
		}
		return append(append([]byte{'"'}, inner...), '"'), true
	}
	var text string
	if json.Unmarshal(tok, &text) != nil {
		return tok, false
	}
	changed := false
	for _, s := range secrets {
		if strings.Contains(text, s.Value) {
			text = strings.ReplaceAll(text, s.Value, SecretMarker(s.Name))
			changed = true
			note(s)
		}
	}
	if !changed {
		return tok, false
	}
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false)
	if e.Encode(text) != nil {
		return tok, false
	}
	return bytes.TrimSuffix(enc.Bytes(), []byte("\n")), true
}
