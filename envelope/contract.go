package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/tidwall/gjson"
)

// Contract profiles.
const (
	ProfileStrict = "strict" // the error-envelope contract of DESIGN.md
	ProfileSpec   = "spec"   // only what the MCP spec requires
)

// DataVocabulary is the closed list of error.data keys of the strict
// contract (clause 4: one list, so a new key joins in one place).
func DataVocabulary() []string {
	return []string{
		"errors",    // a validation failure's locations, distilled
		"header",    // header-binding check: which header
		"expected",  // header-binding check: the body's value
		"received",  // header-binding check: the header's value
		"supported", // protocol versions the server serves
		"requested", // protocol version the client asked for
	}
}

// A Contract is the set of house rules replies are judged against on top
// of the protocol.
type Contract struct {
	Name    string
	Profile string // ProfileStrict or ProfileSpec
	// Codes are extra rows for every version's code table.
	Codes []CodeRule
	// DataKeys is the closed error.data vocabulary.
	DataKeys []string
	// QuoteBound is the longest run of request text a reply may carry.
	QuoteBound int
	// MessageMax is the longest error.message that still counts as concise.
	MessageMax int
	// LocationKey and ProblemsKey name the members of a distilled entry.
	LocationKey, ProblemsKey string
}

// Strict is the embedded default contract.
func Strict() *Contract {
	return &Contract{
		Name:        ProfileStrict,
		Profile:     ProfileStrict,
		DataKeys:    DataVocabulary(),
		QuoteBound:  64,
		MessageMax:  160,
		LocationKey: "location",
		ProblemsKey: "problems",
	}
}

// Spec checks only what the MCP specification requires: data is free-form,
// a long or multi-sentence message is a warning (SHOULD), there is no echo
// or distillation rule.
func Spec() *Contract {
	c := Strict()
	c.Name, c.Profile = ProfileSpec, ProfileSpec
	return c
}

// IsStrict reports whether the house rules beyond the spec apply.
func (c *Contract) IsStrict() bool { return c.Profile == ProfileStrict }

// AllowsDataKey reports whether key may appear under error.data of an
// error with this code (spec-defined keys of spec-defined errors always may).
func (c *Contract) AllowsDataKey(version string, code int, key string) bool {
	if slices.Contains(c.DataKeys, key) {
		return true
	}
	if cls, row := ClassifyCode(version, code, nil); cls == CodeDefined && row.DataKey == key {
		return true
	}
	return false
}

// contractFile is the documented JSON form of a user contract.
type contractFile struct {
	Extends    string         `json:"extends"`
	Codes      []contractCode `json:"codes"`
	DataKeys   []string       `json:"dataKeys"`
	QuoteBound *int           `json:"quoteBound"`
	MessageMax *int           `json:"messageMax"`
	Distilled  *struct {
		Location string `json:"location"`
		Problems string `json:"problems"`
	} `json:"distilled"`
}

type contractCode struct {
	Code int    `json:"code"`
	Name string `json:"name"`
	Use  string `json:"use"`
}

// LoadContract resolves --contract: "strict", "spec", or a JSON file that
// extends one of them.
func LoadContract(arg string) (*Contract, error) {
	switch arg {
	case "", ProfileStrict:
		return Strict(), nil
	case ProfileSpec:
		return Spec(), nil
	}
	raw, err := os.ReadFile(arg)
	if err != nil {
		return nil, fmt.Errorf("reading contract: %w", err)
	}
	c, err := ParseContract(raw)
	if err != nil {
		return nil, fmt.Errorf("contract %s: %w", arg, err)
	}
	c.Name = arg
	return c, nil
}

// ParseContract reads a contract file's bytes. Unknown fields are errors:
// a misspelt key must not silently loosen the contract; so are keys in
// another case, a key given twice and anything after the object, which
// a JSON decoder would let pass. Errors name the line.
func ParseContract(raw []byte) (*Contract, error) {
	// A byte order mark (an editor's on Windows) is no part of the JSON
	// text (RFC 8259 §8.1); it stands for no line.
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("the file is empty; want a JSON object")
	}
	if v := gjson.ParseBytes(raw); !v.IsObject() && gjson.ValidBytes(raw) {
		return nil, fmt.Errorf("line %d: the contract is %s, want a JSON object", lineAt(raw, int64(v.Index)), jsonKind(v))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var f contractFile
	if err := dec.Decode(&f); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("line %d: %w", lineAt(raw, se.Offset), err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("line %d: %s is %s, want %s", lineAt(raw, te.Offset), te.Field, te.Value, te.Type)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("line %d: the file ends inside the contract's object: %w", lineAt(raw, int64(len(raw))), err)
		}
		if kerr := exactKeys(raw, gjson.ParseBytes(raw), contractKeys); kerr != nil {
			return nil, kerr // an unknown field, with its line
		}
		return nil, err
	}
	if rest := bytes.TrimSpace(raw[dec.InputOffset():]); len(rest) > 0 {
		return nil, fmt.Errorf("line %d: content after the contract's object", lineAt(raw, int64(len(raw)-len(rest))))
	}
	if err := exactKeys(raw, gjson.ParseBytes(raw), contractKeys); err != nil {
		return nil, err
	}
	var c *Contract
	switch f.Extends {
	case "", ProfileStrict:
		c = Strict()
	case ProfileSpec:
		c = Spec()
	default:
		return nil, fmt.Errorf("extends %q: want %q or %q", f.Extends, ProfileStrict, ProfileSpec)
	}
	codes := gjson.GetBytes(raw, "codes").Array()
	for i, code := range f.Codes {
		line := 1
		if i < len(codes) { // gjson and the decoder read the same valid text
			line = lineAt(raw, int64(codes[i].Index))
		}
		if code.Name == "" {
			return nil, fmt.Errorf("line %d: codes[%d]: name is required", line, i)
		}
		if code.Code >= -32768 && code.Code <= -32100 {
			// -32000..-32099 is JSON-RPC's implementation-defined range, so a
			// contract may name codes there; the rest is reserved outright.
			return nil, fmt.Errorf("line %d: codes[%d]: %d lies in the range JSON-RPC reserves for pre-defined errors", line, i, code.Code)
		}
		c.Codes = append(c.Codes, CodeRule{Code: code.Code, Name: code.Name, Use: code.Use, Ref: "contract file"})
	}
	for _, k := range f.DataKeys {
		if k == "" {
			return nil, errors.New("dataKeys: empty key")
		}
		if !slices.Contains(c.DataKeys, k) {
			c.DataKeys = append(c.DataKeys, k)
		}
	}
	if f.QuoteBound != nil {
		if *f.QuoteBound < 1 {
			return nil, fmt.Errorf("quoteBound %d: want at least 1", *f.QuoteBound)
		}
		c.QuoteBound = *f.QuoteBound
	}
	if f.MessageMax != nil {
		if *f.MessageMax < 1 {
			return nil, fmt.Errorf("messageMax %d: want at least 1", *f.MessageMax)
		}
		c.MessageMax = *f.MessageMax
	}
	if d := f.Distilled; d != nil {
		if d.Location == "" || d.Problems == "" {
			return nil, errors.New("distilled: location and problems are both required")
		}
		c.LocationKey, c.ProblemsKey = d.Location, d.Problems
	}
	return c, nil
}

// contractKeys are the keys of a contract file, object by object ("" the
// file itself), as the documented form spells them.
var contractKeys = map[string][]string{
	"":          {"extends", "codes", "dataKeys", "quoteBound", "messageMax", "distilled"},
	"codes":     {"code", "name", "use"},
	"distilled": {"location", "problems"},
}

// exactKeys finds, in the contract object v and the objects under its
// codes and distilled, a key given twice or not spelled as documented.
func exactKeys(raw []byte, v gjson.Result, keys map[string][]string) error {
	var err error
	check := func(obj gjson.Result, where string) {
		seen := map[string]bool{}
		obj.ForEach(func(k, _ gjson.Result) bool {
			switch {
			case !slices.Contains(keys[where], k.Str):
				err = fmt.Errorf("line %d: unknown key %q%s", lineAt(raw, int64(obj.Index+k.Index)), k.Str, in(where))
			case seen[k.Str]:
				err = fmt.Errorf("line %d: key %q given twice%s", lineAt(raw, int64(obj.Index+k.Index)), k.Str, in(where))
			}
			seen[k.Str] = true
			return err == nil
		})
	}
	check(v, "")
	for _, c := range v.Get("codes").Array() {
		if err == nil && c.IsObject() {
			check(c, "codes")
		}
	}
	if d := v.Get("distilled"); err == nil && d.IsObject() {
		check(d, "distilled")
	}
	return err
}

func in(where string) string {
	if where == "" {
		return ""
	}
	return " in " + where
}

// jsonKind names a JSON value's type for an error.
func jsonKind(v gjson.Result) string {
	switch {
	case v.IsArray():
		return "an array"
	case v.Type == gjson.Null:
		return "null"
	case v.Type == gjson.String:
		return "a string"
	case v.Type == gjson.Number:
		return "a number"
	}
	return "a boolean"
}

// lineAt is the line of raw that holds byte off.
func lineAt(raw []byte, off int64) int {
	return 1 + bytes.Count(raw[:min(max(int(off), 0), len(raw))], []byte("\n"))
}
