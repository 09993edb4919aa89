package envelope

import (
	"encoding/json"
	"os"
	"testing"
)

func TestIsResponse(t *testing.T) {
	data, err := os.ReadFile("testdata/shapes.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Why      string
		Msg      string
		Response bool
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if got := IsResponse([]byte(c.Msg)); got != c.Response {
			t.Errorf("%s: IsResponse(%q) = %v, want %v", c.Why, c.Msg, got, c.Response)
		}
	}
}
