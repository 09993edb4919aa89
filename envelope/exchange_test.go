package envelope

import "testing"

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
