package envelope_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
)

func TestLoadContract(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"extends":"strict","codes":[{"code":1001,"name":"Rate limited"}],"dataKeys":["retryAfterMs"],"quoteBound":32,"messageMax":100,"distilled":{"location":"path","problems":"messages"}}`)
	c, err := envelope.LoadContract(good)
	if err != nil {
		t.Fatal(err)
	}
	if !c.AllowsDataKey("2026-07-28", -32602, "retryAfterMs") || !c.AllowsDataKey("2026-07-28", -32602, "errors") {
		t.Error("contract keys and the built-in vocabulary must both be allowed")
	}
	if c.AllowsDataKey("2026-07-28", -32602, "stack") {
		t.Error("stack allowed")
	}
	if !c.AllowsDataKey("2026-07-28", -32021, "requiredCapabilities") {
		t.Error("a spec-defined key of a spec-defined error must always be allowed")
	}
	if c.QuoteBound != 32 || c.MessageMax != 100 || c.LocationKey != "path" || c.ProblemsKey != "messages" || len(c.Codes) != 1 {
		t.Errorf("contract not applied: %+v", c)
	}
	bad := []struct{ body, wantErr string }{
		{`{"extends":"lenient"}`, `extends "lenient"`},
		{`{"dataKey":["x"]}`, `line 1: unknown key "dataKey"`},
		{`{"quoteBound":0}`, "quoteBound 0"},
		{`{"codes":[{"code":-32500,"name":"x"}]}`, "reserves"},
		{`{"codes":[{"code":5}]}`, "name is required"},
		{"{\n\"quoteBound\": 3,\n}", "line 3"},
		{"", "empty"},
		{"{\"extends\":\"strict\"}\n\ngarbage", "line 3: content after"},
		{"{\"extends\":\"strict\"}{\"extends\":\"spec\"}", "line 1: content after"},
		{"{\"extends\":\"strict\",\n\"extends\":\"spec\"}", `line 2: key "extends" given twice`},
		{"{\n\"DataKeys\":[\"x\"]}", `line 2: unknown key "DataKeys"`},
		{"{\"codes\":[\n{\"code\":1,\"name\":\"a\"},\n{\"code\":2,\"Name\":\"b\"}]}", `line 3: unknown key "Name" in codes`},
		{"{\"distilled\":{\"location\":\"a\",\n\"problems\":\"b\",\"problems\":\"c\"}}", `line 2: key "problems" given twice in distilled`},
		{"{\n\"quoteBound\": \"64\"}", "line 2: quoteBound is string, want int"},
		{"null", "line 1: the contract is null, want a JSON object"},
		{"\n[]", "line 2: the contract is an array, want a JSON object"},
		{`"strict"`, "line 1: the contract is a string, want a JSON object"},
		{"{\"extends\":\n\"strict\"", "line 2: the file ends inside the contract's object"},
		{"\xef\xbb\xbf{\"extends\":\"lenient\"}", `extends "lenient"`}, // a byte order mark is read past
		{"{\"codes\":[\n{\"code\":1,\"name\":\"a\"},\n{\"code\":-32500,\"name\":\"b\"}]}", "line 3: codes[1]: -32500 lies in the range"},
	}
	for i, b := range bad {
		p := write("bad"+string(rune('a'+i))+".json", b.body)
		_, err := envelope.LoadContract(p)
		if err == nil || !strings.Contains(err.Error(), b.wantErr) || !strings.Contains(err.Error(), p) {
			t.Errorf("LoadContract(%s) = %v, want an error naming the file and %q", b.body, err, b.wantErr)
		}
	}
	if _, err := envelope.LoadContract(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing contract file must be an error")
	}
}
