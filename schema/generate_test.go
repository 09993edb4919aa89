package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// generatorSchemas are input schemas GenerateValid must satisfy.
var generatorSchemas = map[string]string{
	"empty":    `{"type":"object"}`,
	"required": `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"boolean"},"d":{"type":"number"},"opt":{"type":"string"}},"required":["a","b","c","d"],"additionalProperties":false}`,
	"bounds": `{"type":"object","properties":{"n":{"type":"integer","minimum":5,"maximum":9,"multipleOf":3},"x":{"type":"number","exclusiveMinimum":0.5,"maximum":0.75},
		"s":{"type":"string","minLength":12,"maxLength":20},"neg":{"type":"integer","maximum":-3}},"required":["n","x","s","neg"]}`,
	"enums":   `{"type":"object","properties":{"unit":{"type":"string","enum":["metric","imperial"]},"v":{"const":2},"level":{"enum":[1,2,3]}},"required":["unit","v","level"]}`,
	"formats": `{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"mail":{"type":"string","format":"email"},"id":{"type":"string","pattern":"^[a-z]+[0-9]$"}},"required":["when","mail","id"]}`,
	"arrays": `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"minItems":2,"uniqueItems":true},
		"pick":{"type":"array","items":{"enum":["a","b","c"]},"minItems":3,"uniqueItems":true},"tuple":{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"minItems":2}},"required":["tags","pick","tuple"]}`,
	"nested":            `{"type":"object","properties":{"where":{"type":"object","properties":{"lat":{"type":"number","minimum":-90,"maximum":90},"lon":{"type":"number"}},"required":["lat","lon"]}},"required":["where"]}`,
	"refs":              `{"$ref":"#/$defs/args","$defs":{"args":{"type":"object","properties":{"q":{"$ref":"#/$defs/query"}},"required":["q"]},"query":{"type":"string","minLength":3}}}`,
	"anyOf":             `{"type":"object","properties":{"id":{"anyOf":[{"type":"integer","minimum":10},{"type":"string"}]},"maybe":{"type":["null","string"]}},"required":["id","maybe"]}`,
	"allOf":             `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer"}},"required":["b"]}]}`,
	"minProperties":     `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"minProperties":2}`,
	"dependentRequired": `{"type":"object","properties":{"card":{"type":"string"},"cvv":{"type":"string","pattern":"^[0-9]+$"}},"required":["card"],"dependentRequired":{"card":["cvv"]}}`,
	"decimal-step":      `{"type":"object","properties":{"p":{"type":"number","minimum":0.3,"multipleOf":0.1},"q":{"type":"number","minimum":1.15,"maximum":2,"multipleOf":0.05},"r":{"type":"number","exclusiveMinimum":0.7,"multipleOf":0.7},"s":{"type":"number","minimum":0.3,"maximum":0.3,"multipleOf":0.1},"t":{"type":"number","minimum":-0.35,"maximum":-0.3,"multipleOf":0.1}},"required":["p","q","r","s","t"]}`,
	"draft-07":          `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"pair":{"type":"array","items":[{"type":"string"},{"type":"integer"}],"minItems":2}},"required":["pair"]}`,
}

func TestGenerateValid(t *testing.T) {
	for name, schema := range withOfficialToolSchemas(t, generatorSchemas) {
		t.Run(name, func(t *testing.T) {
			args, err := GenerateValid([]byte(schema))
			if err != nil {
				t.Fatal(err)
			}
			ts, err := CompileToolSchema([]byte(schema), "2026-07-28")
			if err != nil {
				t.Fatal(err)
			}
			if es := valid(t)(ts.Validate(args)); es != nil {
				t.Errorf("generated %s is invalid: %v", args, es)
			}
		})
	}
}

func TestGenerateValidGivesUp(t *testing.T) {
	cases := map[string]string{
		`{"type":"object","properties":{"code":{"type":"string","pattern":"^[0-9]{20}$"}},"required":["code"]}`: `generate arguments: property 'code': cannot satisfy pattern '^[0-9]{20}$'`,
		`{"type":"object","properties":{"never":false},"required":["never"]}`:                                   `generate arguments: property 'never': a false schema accepts nothing`,
		`{"type":"object","properties":{"l":{"type":"array","minItems":3,"maxItems":1}},"required":["l"]}`:      `generate arguments: property 'l': minItems 3 exceeds maxItems 1`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":10,"maximum":5}},"required":["n"]}`:     `generate arguments: property 'n': cannot find a number within the bounds`,
		`{"type":"object","properties":{"s":{"type":"string","not":{"const":"x"}}},"required":["s"]}`:           `generate arguments: the schema wants more than this generator knows (at /s: matches a shape that is not allowed)`,
		`{"type":"object","properties":{"r":{"$ref":"https://example.com/r.json"}},"required":["r"]}`:           `generate arguments: property 'r': cannot follow $ref 'https://example.com/r.json'`,
		`{"type":`: `generate arguments: not valid json`,
	}
	for schema, want := range cases {
		_, err := GenerateValid([]byte(schema))
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", schema, err, want)
		}
	}
}

func TestGenerateViolations(t *testing.T) {
	for name, schema := range withOfficialToolSchemas(t, generatorSchemas) {
		t.Run(name, func(t *testing.T) {
			ts, err := CompileToolSchema([]byte(schema), "2026-07-28")
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, v := range GenerateViolations([]byte(schema)) {
				if seen[v.Name] {
					t.Errorf("duplicate violation name %s", v.Name)
				}
				seen[v.Name] = true
				if es := valid(t)(ts.Validate(v.Args)); es == nil {
					t.Errorf("%s (%s): %s is valid", v.Name, v.Why, v.Args)
				}
				var obj map[string]any
				if err := json.Unmarshal(v.Args, &obj); err != nil {
					t.Errorf("%s: args are not an object: %s", v.Name, v.Args)
				}
				if v.Why == "" || strings.ContainsAny(v.Why, "\r\n") {
					t.Errorf("%s: why %q", v.Name, v.Why)
				}
			}
		})
	}
}

func TestGenerateViolationsNames(t *testing.T) {
	got := GenerateViolations([]byte(generatorSchemas["required"]))
	var names []string
	for _, v := range got {
		names = append(names, v.Name)
	}
	want := []string{
		"missing-required/a", "missing-required/b", "missing-required/c", "missing-required/d",
		"wrong-type/a", "wrong-type/b", "wrong-type/c", "wrong-type/d", "wrong-type/opt",
		"extra-property",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	enums := GenerateViolations([]byte(generatorSchemas["enums"]))
	byName := map[string]Violation{}
	for _, v := range enums {
		byName[v.Name] = v
	}
	for name, args := range map[string]string{
		"out-of-enum/unit":  `{"level":1,"unit":"zz-not-allowed","v":2}`,
		"out-of-enum/v":     `{"level":1,"unit":"metric","v":3}`,
		"out-of-enum/level": `{"level":4,"unit":"metric","v":2}`,
		"wrong-type/unit":   `{"level":1,"unit":12345,"v":2}`,
	} {
		if got := string(byName[name].Args); got != args {
			t.Errorf("%s: args %s, want %s", name, got, args)
		}
	}
	if GenerateViolations([]byte(`{"type":`)) != nil || GenerateViolations([]byte(`true`)) != nil {
		t.Error("violations for a schema that is not an object schema")
	}
}

// withOfficialToolSchemas adds the inputSchemas of the official Tool
// examples, when the official files are present.
func withOfficialToolSchemas(t *testing.T, in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		out[k] = v
	}
	dir := os.Getenv(schemaDirEnv)
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "mcp-schema")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "examples-2026-07-28", "Tool", "*.json"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tool struct {
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		out["official/"+filepath.Base(f)] = string(tool.InputSchema)
	}
	return out
}

// A closed object whose patternProperties admit every name has no extra
// property to send: the generator says so and stops, whatever the
// schema (a server's schema must never keep the checker searching).
func TestGenerateViolationsCatchAllPattern(t *testing.T) {
	for _, sch := range []string{
		`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false,"patternProperties":{".*":{}}}`,
		`{"type":"object","additionalProperties":false,"patternProperties":{"^zz":{},"":{}}}`,
	} {
		done := make(chan []Violation, 1)
		go func() { done <- GenerateViolations([]byte(sch)) }()
		select {
		case vs := <-done:
			for _, v := range vs {
				if v.Name == "extra-property" {
					t.Errorf("%s: an extra property %s, but every name matches a pattern", sch, v.Args)
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: GenerateViolations still searching after 10s", sch)
		}
	}
}
