package envelope

import (
	"slices"
	"testing"
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
	secrets := []Secret{{"authorization", "Bearer tok-5678"}, {"Authorization", "tok-5678"}, {"X-Api-Key", "key"}}
	for _, tt := range []struct {
		in, want string
		names    []string
	}{
		{`{"m":"bad Bearer tok-5678, or tok-5678"}`, `{"m":"bad <redacted:Authorization>, or <redacted:Authorization>"}`, []string{"Authorization"}},
		{`{"m":"no secret, a key too short to scrub"}`, `{"m":"no secret, a key too short to scrub"}`, nil},
	} {
		got, names := ScrubSecrets([]byte(tt.in), secrets)
		if string(got) != tt.want || !slices.Equal(names, tt.names) {
			t.Errorf("ScrubSecrets(%s) = %s, %v; want %s, %v", tt.in, got, names, tt.want, tt.names)
		}
	}
	ex := &Exchange{Request: Request{Body: []byte(`{}`)}, Response: &Response{Body: []byte("a tok-5678\n"), Messages: [][]byte{[]byte("a tok-5678")}}}
	c := ScrubExchange(ex, secrets)
	if c == ex || string(c.Response.Body) != "a <redacted:Authorization>\n" || string(c.Response.Messages[0]) != "a <redacted:Authorization>" || !slices.Equal(c.Redacted, []string{"Authorization"}) {
		t.Errorf("ScrubExchange: %+v %q", c.Response, c.Redacted)
	}
	if string(ex.Response.Body) != "a tok-5678\n" {
		t.Error("ScrubExchange changed the exchange it copied")
	}
	if clean := (&Exchange{Response: &Response{Body: []byte("ok")}}); ScrubExchange(clean, secrets) != clean {
		t.Error("an exchange without secrets was copied")
	}
}
