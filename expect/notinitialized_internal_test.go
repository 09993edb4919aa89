package expect

import "testing"

// TestNotInitialized: a refusal whose message says the server or its
// connection is not initialized yet may be a session's refusal of a
// request before any initialize (review rev90); one about some other
// state ("Tool state not initialized") is not (review rev92: every 400
// naming "initiali" lost its id unjudged; rev94: the narrowed reading
// missed common wordings).
func TestNotInitialized(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{"bad request: server not initialized", true},
		{"server is not initialized", true},
		{"server has not been initialized", true},
		{"connection not yet initialized", true},
		{"received request before initialization was complete", true},
		{"server hasn't been initialized", true},
		{"server is uninitialized", true},
		{"initialization not complete", true},
		{"must initialize first", true},
		{"server initialization has not completed", true},
		{"tool state not initialized", false},
		{"database uninitialized", false},
		{"invalid request: not initialized", false},
	} {
		if got := notInitialized.MatchString(c.msg); got != c.want {
			t.Errorf("%q: %v, want %v", c.msg, got, c.want)
		}
	}
}
