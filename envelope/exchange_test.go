package envelope

import (
	"slices"
	"testing"

	"github.com/tidwall/gjson"
)

// IsEventStream reads a Content-Type with the latitude RFC 9110 §8.3.1
// gives parameters: parameters = *( OWS ";" OWS [ parameter ] ).
func TestIsEventStream(t *testing.T) {
	for v, want := range map[string]bool{
		"text/event-stream":                 true,
		"Text/Event-Stream":                 true,
		"text/event-stream; charset=utf-8":  true,
		"text/event-stream;;charset=utf-8":  true, // mime.ParseMediaType refuses this
		"text/event-stream ; charset=UTF-8": true,
		"application/json":                  false,
		"text/event-streams":                false,
		"":                                  false,
	} {
		if got := IsEventStream(v); got != want {
			t.Errorf("IsEventStream(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestScrubSecrets(t *testing.T) {
	secrets := []Secret{{"authorization", "Bearer tok-5678"}, {"Authorization", "tok-5678"}, {"X-Api-Key", "sk/live/abcdef"}, {"X-Pin", "4321"}, {"X-Short", "key"}}
	for _, tt := range []struct {
		in, want string
		found    int
	}{
		{`{"m":"bad Bearer tok-5678, or tok-5678"}`, `{"m":"bad <redacted:Authorization>, or <redacted:Authorization>"}`, 2},
		// Escaped as PHP's json_encode and \u escapes write it: the
		// decoded text holds the secret, which is what a client reads.
		{`{"m":"key sk\/live\/abcdef"}`, `{"m":"key <redacted:X-Api-Key>"}`, 1},
		{`{"m":"key \u0073k/live/abcdef, \"quoted\""}`, `{"m":"key <redacted:X-Api-Key>, \"quoted\""}`, 1},
		// Short values are taken out too; their echo is not judged.
		{`{"m":"pin 4321"}`, `{"m":"pin <redacted:X-Pin>"}`, 1},
		{`{"m":"no secret, a key too short to scrub"}`, `{"m":"no secret, a key too short to scrub"}`, 0},
	} {
		got, found := ScrubSecrets([]byte(tt.in), secrets)
		if string(got) != tt.want || len(found) != tt.found {
			t.Errorf("ScrubSecrets(%s) = %s, %v; want %s, %d found", tt.in, got, found, tt.want, tt.found)
		}
	}
	ex := &Exchange{Request: Request{Body: []byte(`{}`)}, Response: &Response{
		Header:   map[string][]string{"X-Echo": {"tok-5678"}},
		Body:     []byte("a tok-5678 4321\n"),
		Messages: [][]byte{[]byte("a tok-5678 4321")},
	}}
	c := ScrubExchange(ex, secrets)
	if c == ex || string(c.Response.Body) != "a <redacted:Authorization> <redacted:X-Pin>\n" || string(c.Response.Messages[0]) != "a <redacted:Authorization> <redacted:X-Pin>" ||
		c.Response.Header["X-Echo"][0] != "<redacted:Authorization>" || !slices.Equal(c.Redacted, []string{"Authorization"}) {
		t.Errorf("ScrubExchange: %+v %q", c.Response, c.Redacted)
	}
	if string(ex.Response.Body) != "a tok-5678 4321\n" || ex.Response.Header["X-Echo"][0] != "tok-5678" {
		t.Error("ScrubExchange changed the exchange it copied")
	}
	short := &Exchange{Response: &Response{Body: []byte("pin 4321")}}
	if c := ScrubExchange(short, secrets); c == short || string(c.Response.Body) != "pin <redacted:X-Pin>" || c.Redacted != nil {
		t.Errorf("a short secret: %q, redacted %q; want it scrubbed and not named (its echo is not judged)", c.Response.Body, c.Redacted)
	}
	if clean := (&Exchange{Response: &Response{Body: []byte("ok")}}); ScrubExchange(clean, secrets) != clean {
		t.Error("an exchange without secrets was copied")
	}
}

// TestCredentialName: the names that say credential, as a header or as
// a relay's query parameter, and names of the same shape that do not
// (a tenant, a region, a monkey whose letters hold "key").
func TestCredentialName(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "Proxy-Authorization": true, "Cookie": true, "X-Api-Key": true, "X-Apikey": true,
		"X-Auth-Token": true, "X-Client-Secret": true, "X-Password": true, "X-Session": true, "X-Hub-Signature": true,
		"X-Key": true, "Query-Access_token": true, "Query-Key": true, "Query-Sig": true,
		"X-Accesskey": true, "X-Privatekey": true, "X-Passphrase": true, "Ocp-Apim-Subscription-Key": true,
		"X-Tenant": false, "X-Region": false, "X-Monkey": false, "X-Debug": false, "Query-Region": false, "X-Keyboard-Layout": false,
	} {
		if got := CredentialName(name); got != want {
			t.Errorf("CredentialName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestScrubBody: a recorded body keeps its JSON shape and meaning; the
// secrets go from its string values (and from text that is no JSON).
func TestScrubBody(t *testing.T) {
	secrets := []Secret{{"X-Pin", "4321"}, {"X-Key", "sk-live-12345678"}, {"X-Num", "12345678"}, {"X-Scope", "tools"}, {"X-Debug", "true"},
		{"X-Hint", "resources/templates/list"}, {"X-Version", "2025-11-25"}}
	for _, tt := range []struct {
		name, in, want string
		found          int
	}{
		{"a string value", `{"m":"pin 4321"}`, `{"m":"pin <redacted:X-Pin>"}`, 1},
		{"a short number stays", `{"n":43210,"m":"4321"}`, `{"n":43210,"m":"<redacted:X-Pin>"}`, 1},
		{"a number holding a long secret", `{"code":9123456789}`, `{"code":"<redacted:X-Num>"}`, 1},
		{"a member name stays", `{"sk-live-12345678":"sk-live-12345678"}`, `{"sk-live-12345678":"<redacted:X-Key>"}`, 1},
		{"escaped", `{"m":"key sk-live-12345678\/x \u0034321"}`, `{"m":"key <redacted:X-Key>/x <redacted:X-Pin>"}`, 2},
		{"plain words are no secrets", `{"method":"tools/list","ok":true}`, `{"method":"tools/list","ok":true}`, 0},
		{"nor are the protocol's words", `{"method":"resources/templates/list","v":"2025-11-25"}`, `{"method":"resources/templates/list","v":"2025-11-25"}`, 0},
		{"an event stream's data as JSON, the rest as text", "event: message\r\ndata: {\"n\":4321,\"m\":\"4321\"}\r\n: note 4321\r\n\r\n",
			"event: message\r\ndata: {\"n\":4321,\"m\":\"<redacted:X-Pin>\"}\r\n: note <redacted:X-Pin>\r\n\r\n", 1},
		{"text that is no JSON", "pin 4321, ok", "pin <redacted:X-Pin>, ok", 1},
	} {
		got, found := ScrubBody([]byte(tt.in), secrets)
		if string(got) != tt.want || len(found) != tt.found {
			t.Errorf("%s: ScrubBody(%s) = %s, %d found; want %s, %d", tt.name, tt.in, got, len(found), tt.want, tt.found)
		}
	}
}

// TestLivenessBody: the probe every server of a version answers at
// once, with the id as given (an integer of the runner's, a string of a
// relay's): valid JSON, server/discover with the 2026-07-28 _meta in
// that version, ping before.
func TestLivenessBody(t *testing.T) {
	for _, tc := range []struct {
		version, id, method string
	}{
		{V20260728, `7`, "server/discover"},
		{V20251125, `"wymcp-check-liveness-1"`, "ping"},
		{V20250618, `12`, "ping"},
	} {
		b := LivenessBody(tc.version, []byte(tc.id))
		m := gjson.ParseBytes(b)
		if !gjson.ValidBytes(b) || m.Get("id").Raw != tc.id || m.Get("method").Str != tc.method || m.Get("jsonrpc").Str != "2.0" {
			t.Errorf("LivenessBody(%s, %s) = %s", tc.version, tc.id, b)
		}
		if meta := m.Get("params._meta").Map(); (tc.method == "server/discover") != (meta[MetaProtocolVersion].Str == V20260728 && meta[MetaClientCapabilities].IsObject()) {
			t.Errorf("LivenessBody(%s) = %s", tc.version, b)
		}
	}
}
