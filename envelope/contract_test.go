package envelope_test

import (
	"fmt"
	"os"
	"path/filepath"
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
	// Each bad file is refused with the line of the key or value at
	// fault and the cause; its twin, the same file put right, loads.
	// (A twin of "" means the bad file has no one mistake to put right.)
	bad := []struct{ body, wantErr, twin string }{
		{`{"extends":"lenient"}`, `line 1: extends "lenient": want "strict" or "spec"`, `{"extends":"spec"}`},
		{`{"extends":""}`, `line 1: extends "": want "strict" or "spec"`, `{"extends":"strict"}`},
		{"{\n\"extends\": null}", `line 2: extends is null, want "strict" or "spec"`, "{\n\"extends\": \"strict\"}"},
		{`{"dataKey":["x"]}`, `line 1: unknown key "dataKey"`, `{"dataKeys":["x"]}`},
		{`{"quoteBound":0}`, "line 1: quoteBound 0: want at least 16", `{"quoteBound":16}`},
		{"{\n  \"extends\": \"strict\",\n  \"quoteBound\": -5\n}\n", "line 3: quoteBound -5: want at least 16", "{\n  \"extends\": \"strict\",\n  \"quoteBound\": 20\n}\n"},
		// The echo scan counts no run shorter than 16: a smaller bound
		// would not be kept (review rev52).
		{`{"quoteBound":8}`, "line 1: quoteBound 8: want at least 16", `{"quoteBound":16}`},
		// One member cannot hold both a pointer and a list (review rev52).
		{`{"distilled":{"location":"x","problems":"x"}}`, `line 1: distilled: location and problems are both "x"; an entry holds them in two members`, `{"distilled":{"location":"x","problems":"y"}}`},
		{"{\n\"quoteBound\": null}", "line 2: quoteBound is null, want an integer", "{\n\"quoteBound\": 64}"},
		{"{\n\"quoteBound\": \"64\"}", "line 2: quoteBound is a string, want an integer", "{\n\"quoteBound\": 64}"},
		{`{"quoteBound":6.5}`, "line 1: quoteBound is 6.5, want an integer", `{"quoteBound":60}`},
		{`{"quoteBound":1e2}`, "line 1: quoteBound is 1e2, want an integer", `{"quoteBound":100}`},
		{"{\n\"messageMax\":\n-1}", "line 3: messageMax -1: want at least 1", "{\n\"messageMax\":\n1}"},
		{`{"messageMax":null}`, "line 1: messageMax is null, want an integer", `{"messageMax":160}`},
		{`{"codes":[{"code":-32500,"name":"x"}]}`, "line 1: codes[0]: -32500 lies in the range JSON-RPC reserves for pre-defined errors", `{"codes":[{"code":-32050,"name":"x"}]}`},
		{`{"codes":[{"code":5}]}`, "line 1: codes[0]: name is required", `{"codes":[{"code":5,"name":"x"}]}`},
		{"{\"codes\":[\n{\"code\":1001,\"name\":\"Rate limited\"},\n{\"code\":1001,\"name\":\"Quota\"}]}", `line 3: codes[1]: code 1001 is given twice (as "Rate limited" and "Quota")`, "{\"codes\":[\n{\"code\":1001,\"name\":\"Rate limited\"},\n{\"code\":1002,\"name\":\"Quota\"}]}"},
		{`{"codes":[{"code":5,"name":""}]}`, "line 1: codes[0]: name is required", `{"codes":[{"code":5,"name":"x"}]}`},
		// A code left out or null must not join the table as 0.
		{`{"extends":"strict","codes":[{"name":"Rate limited","use":"too many calls"}]}`, "line 1: codes[0]: code is missing", `{"extends":"strict","codes":[{"code":1001,"name":"Rate limited","use":"too many calls"}]}`},
		{"{\"codes\": [\n  {\"code\": 1, \"name\": \"a\"},\n  {\"name\": \"b\"}\n]}", "line 3: codes[1]: code is missing", "{\"codes\": [\n  {\"code\": 1, \"name\": \"a\"},\n  {\"code\": 2, \"name\": \"b\"}\n]}"},
		{`{"extends":"strict","codes":[{"code":null,"name":"x"}]}`, "line 1: codes[0]: code is null, want an integer", `{"extends":"strict","codes":[{"code":7,"name":"x"}]}`},
		{`{"codes":[{"code":"7","name":"x"}]}`, "line 1: codes[0]: code is a string, want an integer", `{"codes":[{"code":7,"name":"x"}]}`},
		{`{"codes":[{"code":7.5,"name":"x"}]}`, "line 1: codes[0]: code is 7.5, want an integer", `{"codes":[{"code":7,"name":"x"}]}`},
		{`{"codes":[{"code":7,"name":null}]}`, "line 1: codes[0]: name is null, want a string", `{"codes":[{"code":7,"name":"x"}]}`},
		{`{"codes":[{"code":7,"name":"x","use":null}]}`, "line 1: codes[0]: use is null, want a string", `{"codes":[{"code":7,"name":"x","use":"y"}]}`},
		{"{\"codes\":[\nnull]}", "line 2: codes[0] is null, want an object", "{\"codes\":[\n{\"code\":7,\"name\":\"x\"}]}"},
		{`{"codes":null}`, "line 1: codes is null, want an array of objects", `{"codes":[]}`},
		{`{"codes":{"code":7,"name":"x"}}`, "line 1: codes is an object, want an array of objects", `{"codes":[{"code":7,"name":"x"}]}`},
		{"{\n  \"extends\": \"strict\",\n  \"dataKeys\": [null]\n}\n", "line 3: dataKeys[0] is null, want a string", "{\n  \"extends\": \"strict\",\n  \"dataKeys\": [\"a\"]\n}\n"},
		{"{\"dataKeys\": [\"a\",\n\"\"]}", "line 2: dataKeys[1]: empty key", "{\"dataKeys\": [\"a\",\n\"b\"]}"},
		{`{"dataKeys":null}`, "line 1: dataKeys is null, want an array of strings", `{"dataKeys":[]}`},
		{`{"distilled":null}`, "line 1: distilled is null, want an object", `{"distilled":{"location":"l","problems":"p"}}`},
		{"{\"distilled\":\n{\"location\":\"l\"}}", "line 2: distilled: location and problems are both required", "{\"distilled\":\n{\"location\":\"l\",\"problems\":\"p\"}}"},
		{`{"distilled":{"location":null,"problems":"p"}}`, "line 1: distilled: location is null, want a string", `{"distilled":{"location":"l","problems":"p"}}`},
		{"{\n\"quoteBound\": 30,\n}", "line 3: invalid character '}' looking for beginning of object key string", "{\n\"quoteBound\": 30\n}"},
		{"", "the file is empty; want a JSON object", "{}"},
		{"{\"extends\":\"strict\"}\n\ngarbage", "line 3: content after the contract's object", "{\"extends\":\"strict\"}\n\n"},
		{"{\"extends\":\"strict\"}{\"extends\":\"spec\"}", "line 1: content after the contract's object", "{\"extends\":\"strict\"}"},
		{"{\"extends\":\"strict\",\n\"extends\":\"spec\"}", `line 2: key "extends" given twice`, "{\"extends\":\"strict\"}"},
		{"{\n\"DataKeys\":[\"x\"]}", `line 2: unknown key "DataKeys"`, "{\n\"dataKeys\":[\"x\"]}"},
		{"{\"codes\":[\n{\"code\":1,\"name\":\"a\"},\n{\"code\":2,\"Name\":\"b\"}]}", `line 3: unknown key "Name" in codes`, "{\"codes\":[\n{\"code\":1,\"name\":\"a\"},\n{\"code\":2,\"name\":\"b\"}]}"},
		// The key's own line, not where the decoder stopped (after the
		// enclosing value, two lines on), nor one past a one-line file.
		{"{\n  \"extends\": \"strict\",\n  \"codes\": [{\"code\": 1001, \"nmae\": \"x\"}],\n  \"dataKeys\": [\"a\"],\n  \"quoteBound\": 64\n}\n", `line 3: unknown key "nmae" in codes`, "{\n  \"extends\": \"strict\",\n  \"codes\": [{\"code\": 1001, \"name\": \"x\"}],\n  \"dataKeys\": [\"a\"],\n  \"quoteBound\": 64\n}\n"},
		{`{"extends":"strict","codes":[{"code":1001,"nmae":"x"}]}` + "\n", `line 1: unknown key "nmae" in codes`, `{"extends":"strict","codes":[{"code":1001,"name":"x"}]}` + "\n"},
		{"{\"distilled\":{\"location\":\"a\",\n\"problems\":\"b\",\"problems\":\"c\"}}", `line 2: key "problems" given twice in distilled`, "{\"distilled\":{\"location\":\"a\",\n\"problems\":\"b\"}}"},
		{"{\"distilled\":{\"location\":\"a\",\n\"problem\":\"b\"}}", `line 2: unknown key "problem" in distilled`, "{\"distilled\":{\"location\":\"a\",\n\"problems\":\"b\"}}"},
		{"null", "line 1: the contract is null, want a JSON object", "{}"},
		{"\n[]", "line 2: the contract is an array, want a JSON object", "\n{}"},
		{`"strict"`, "line 1: the contract is a string, want a JSON object", `{"extends":"strict"}`},
		{"{\"extends\":\n\"strict\"", "line 2: the file ends inside the contract's object: unexpected EOF", "{\"extends\":\n\"strict\"}"},
		{"\xef\xbb\xbf{\"extends\":\"lenient\"}", `line 1: extends "lenient": want "strict" or "spec"`, "\xef\xbb\xbf{\"extends\":\"strict\"}"}, // a byte order mark is read past
		{"{\"codes\":[\n{\"code\":1,\"name\":\"a\"},\n{\"code\":-32500,\"name\":\"b\"}]}", "line 3: codes[1]: -32500 lies in the range JSON-RPC reserves for pre-defined errors", "{\"codes\":[\n{\"code\":1,\"name\":\"a\"},\n{\"code\":2,\"name\":\"b\"}]}"},
		// The first mistake in the file is the one named.
		{"{\"bogus\":1,\n\"extends\":\"lenient\"}", `line 1: unknown key "bogus"`, "{\n\"extends\":\"spec\"}"},
	}
	for i, b := range bad {
		p := write(fmt.Sprintf("bad%d.json", i), b.body)
		if _, err := envelope.LoadContract(p); err == nil || err.Error() != "contract "+p+": "+b.wantErr {
			t.Errorf("LoadContract(%q) = %v, want %q", b.body, err, "contract "+p+": "+b.wantErr)
		}
		p = write(fmt.Sprintf("twin%d.json", i), b.twin)
		if _, err := envelope.LoadContract(p); err != nil {
			t.Errorf("LoadContract(%q), the twin of %q: %v", b.twin, b.body, err)
		}
	}
	// The largest integer is how a file says "no bound": it is read as
	// MaxBound, on which the checks' arithmetic cannot overflow (2^61
	// failed every message, review rev52).
	c, err = envelope.LoadContract(write("unbounded.json", `{"messageMax":9223372036854775807,"quoteBound":9223372036854775807}`))
	if err != nil || c.MessageMax != envelope.MaxBound || c.QuoteBound != envelope.MaxBound {
		t.Errorf("an unbounded contract: %+v, %v; want both bounds %d", c, err, envelope.MaxBound)
	}
	// "extends" applies wherever it stands, and the codes beside it join
	// the table of the profile it names.
	c, err = envelope.LoadContract(write("late.json", `{"codes":[{"code":1001,"name":"Rate limited"}],"extends":"spec"}`))
	if err != nil || c.IsStrict() || len(c.Codes) != 1 || c.Codes[0].Code != 1001 {
		t.Errorf("extends after codes: %+v, %v", c, err)
	}
	if _, err := envelope.LoadContract(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing contract file must be an error")
	}
}
