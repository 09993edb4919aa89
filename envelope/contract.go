package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/wymcp/wymcp-check/inputfile"
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

// LoadContract resolves --contract: "strict", "spec", or a JSON file that
// extends one of them.
func LoadContract(arg string) (*Contract, error) {
	switch arg {
	case "", ProfileStrict:
		return Strict(), nil
	case ProfileSpec:
		return Spec(), nil
	}
	// Bounded, and not waiting for a FIFO's writer: a contract is short
	// text, and /dev/zero once grew the checker by gigabytes.
	raw, err := inputfile.Read(arg, MaxContractBytes)
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

// MaxContractBytes bounds what is read of a contract file.
const MaxContractBytes = 64 << 20

// ParseContract reads a contract file's bytes. Unknown fields are errors:
// a misspelt key must not silently loosen the contract; so are keys in
// another case, a key given twice, a member given as null or left out
// where it is required (a code read as 0 would join the code table) and
// anything after the object, which a JSON decoder would let pass.
// Errors name the line of the key or value at fault.
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
	// The decoder says where the text stops being JSON; the members are
	// read below from gjson, which keeps every key's and value's offset
	// (the decoder's offsets are where it stopped, often lines later).
	dec := json.NewDecoder(bytes.NewReader(raw))
	var doc json.RawMessage
	if err := dec.Decode(&doc); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("line %d: %w", lineAt(raw, se.Offset), err)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("line %d: the file ends inside the contract's object: %w", lineAt(raw, int64(len(raw))), err)
		}
		return nil, fmt.Errorf("reading the contract: %w", err)
	}
	if rest := bytes.TrimSpace(raw[dec.InputOffset():]); len(rest) > 0 {
		return nil, fmt.Errorf("line %d: content after the contract's object", lineAt(raw, int64(len(raw)-len(rest))))
	}
	p := contractParser{raw: raw}
	return p.contract(gjson.ParseBytes(raw))
}

// contractKeys are the keys of a contract file, object by object ("" the
// file itself), as the documented form spells them.
var contractKeys = map[string][]string{
	"":          {"extends", "codes", "dataKeys", "quoteBound", "messageMax", "distilled"},
	"codes":     {"code", "name", "use"},
	"distilled": {"location", "problems"},
}

// contractParser reads a contract object that is valid JSON, member by
// member in the file's order, so the first error reported is the first
// in the file.
type contractParser struct{ raw []byte }

// errAt is an error at the line of v (a key or a value).
func (p contractParser) errAt(v gjson.Result, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", lineAt(p.raw, int64(v.Index)), fmt.Sprintf(format, args...))
}

// members calls f for each member of the object obj, after refusing a
// key not spelled as documented for where ("" the file, "codes",
// "distilled") or given twice.
func (p contractParser) members(obj gjson.Result, where string, f func(k, v gjson.Result) error) error {
	seen := map[string]bool{}
	var err error
	obj.ForEach(func(k, v gjson.Result) bool {
		switch {
		case !slices.Contains(contractKeys[where], k.Str):
			err = p.errAt(k, "unknown key %q%s", k.Str, in(where))
		case seen[k.Str]:
			err = p.errAt(k, "key %q given twice%s", k.Str, in(where))
		default:
			seen[k.Str] = true
			err = f(k, v)
		}
		return err == nil
	})
	return err
}

// str reads a string member named name. A null is refused like any other
// wrong type: the decoder would read it as "", a default nobody wrote.
func (p contractParser) str(name string, v gjson.Result) (string, error) {
	if v.Type != gjson.String {
		return "", p.errAt(v, "%s is %s, want a string", name, jsonKind(v))
	}
	if !utf8.ValidString(v.Str) {
		return "", p.errAt(v, "%s is not valid UTF-8", name)
	}
	return v.Str, nil
}

// integer reads an integer member named name: a JSON number written
// without fraction or exponent that fits 64 bits, as the decoder reads
// one into an int.
func (p contractParser) integer(name string, v gjson.Result) (int, error) {
	if v.Type != gjson.Number {
		return 0, p.errAt(v, "%s is %s, want an integer", name, jsonKind(v))
	}
	n, err := strconv.ParseInt(v.Raw, 10, 0)
	if err != nil {
		return 0, p.errAt(v, "%s is %s, want an integer", name, v.Raw)
	}
	return int(n), nil
}

// bound reads quoteBound or messageMax: an integer of at least least.
// One past MaxBound means no bound (9223372036854775807 is how a file
// writes that), and is read as MaxBound: the checks' arithmetic on a
// bound then cannot overflow (review rev52: 2^61 failed every message).
func (p contractParser) bound(name string, v gjson.Result, least int) (int, error) {
	n, err := p.integer(name, v)
	if err == nil && n < least {
		err = p.errAt(v, "%s %d: want at least %d", name, n, least)
	}
	return min(n, MaxBound), err
}

// MaxBound is the largest quoteBound or messageMax a contract holds:
// longer than any reply the checker reads.
const MaxBound = 1 << 30

// MinQuoteBound is the smallest quoteBound a contract may set: the echo
// scan counts no run of request text shorter (shorter runs recur by
// chance), so a smaller bound would not be kept (review rev52).
const MinQuoteBound = 16

func (p contractParser) contract(doc gjson.Result) (*Contract, error) {
	// The members are read in the file's order and applied after, to the
	// profile "extends" names wherever it stands.
	profile := Strict
	var add Contract // codes and data keys to add; bounds and names that replace
	err := p.members(doc, "", func(k, v gjson.Result) error {
		var err error
		switch k.Str {
		case "extends":
			if v.Type != gjson.String {
				return p.errAt(v, "extends is %s, want %q or %q", jsonKind(v), ProfileStrict, ProfileSpec)
			}
			switch name := v.Str; name {
			case ProfileStrict:
				profile = Strict
			case ProfileSpec:
				profile = Spec
			default:
				return p.errAt(v, "extends %q: want %q or %q", name, ProfileStrict, ProfileSpec)
			}
		case "codes":
			err = p.codes(&add, v)
		case "dataKeys":
			err = p.dataKeys(&add, v)
		case "quoteBound":
			add.QuoteBound, err = p.bound("quoteBound", v, MinQuoteBound)
		case "messageMax":
			add.MessageMax, err = p.bound("messageMax", v, 1)
		case "distilled":
			add.LocationKey, add.ProblemsKey, err = p.distilled(v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	c := profile()
	c.Codes = append(c.Codes, add.Codes...)
	// (By a set: a file of 100,000 keys took seconds by a scan of the
	// list for each, review rev52.)
	have := map[string]bool{}
	for _, k := range c.DataKeys {
		have[k] = true
	}
	for _, k := range add.DataKeys {
		if !have[k] {
			have[k] = true
			c.DataKeys = append(c.DataKeys, k)
		}
	}
	if add.QuoteBound > 0 {
		c.QuoteBound = add.QuoteBound
	}
	if add.MessageMax > 0 {
		c.MessageMax = add.MessageMax
	}
	if add.LocationKey != "" {
		c.LocationKey, c.ProblemsKey = add.LocationKey, add.ProblemsKey
	}
	return c, nil
}

// codes adds the rows of the array v to c's code table.
func (p contractParser) codes(c *Contract, v gjson.Result) error {
	if !v.IsArray() {
		return p.errAt(v, "codes is %s, want an array of objects", jsonKind(v))
	}
	seen := map[int]int{} // code → its row in c.Codes
	for j, r := range c.Codes {
		seen[r.Code] = j
	}
	for i, e := range v.Array() {
		if !e.IsObject() {
			return p.errAt(e, "codes[%d] is %s, want an object", i, jsonKind(e))
		}
		var row CodeRule
		var hasCode bool
		err := p.members(e, "codes", func(k, v gjson.Result) error {
			var err error
			switch k.Str {
			case "code":
				row.Code, err = p.integer(fmt.Sprintf("codes[%d]: code", i), v)
				hasCode = true
			case "name":
				row.Name, err = p.str(fmt.Sprintf("codes[%d]: name", i), v)
			case "use":
				row.Use, err = p.str(fmt.Sprintf("codes[%d]: use", i), v)
			}
			return err
		})
		switch {
		case err != nil:
			return err
		case !hasCode:
			// Read as 0, the row would admit code 0 (the go-sdk bug
			// ERR1001 exists to catch).
			return p.errAt(e, "codes[%d]: code is missing", i)
		case row.Name == "":
			return p.errAt(e, "codes[%d]: name is required", i)
		case row.Code >= -32768 && row.Code <= -32100:
			// -32000..-32099 is JSON-RPC's implementation-defined range, so a
			// contract may name codes there; the rest is reserved outright.
			return p.errAt(e, "codes[%d]: %d lies in the range JSON-RPC reserves for pre-defined errors", i, row.Code)
		}
		if j, twice := seen[row.Code]; twice {
			// Two names for one code leave unsaid which condition it fits;
			// only the first would ever be read.
			return p.errAt(e, "codes[%d]: code %d is given twice (as %q and %q)", i, row.Code, c.Codes[j].Name, row.Name)
		}
		row.Ref = "contract file"
		seen[row.Code] = len(c.Codes)
		c.Codes = append(c.Codes, row)
	}
	return nil
}

// dataKeys adds the keys of the array v to c's data vocabulary.
func (p contractParser) dataKeys(c *Contract, v gjson.Result) error {
	if !v.IsArray() {
		return p.errAt(v, "dataKeys is %s, want an array of strings", jsonKind(v))
	}
	for i, e := range v.Array() {
		k, err := p.str(fmt.Sprintf("dataKeys[%d]", i), e)
		if err != nil {
			return err
		}
		if k == "" {
			return p.errAt(e, "dataKeys[%d]: empty key", i)
		}
		c.DataKeys = append(c.DataKeys, k)
	}
	return nil
}

// distilled reads the names of a distilled entry's two members.
func (p contractParser) distilled(v gjson.Result) (location, problems string, err error) {
	if !v.IsObject() {
		return "", "", p.errAt(v, "distilled is %s, want an object", jsonKind(v))
	}
	err = p.members(v, "distilled", func(k, v gjson.Result) error {
		var err error
		switch k.Str {
		case "location":
			location, err = p.str("distilled: location", v)
		case "problems":
			problems, err = p.str("distilled: problems", v)
		}
		return err
	})
	switch {
	case err != nil:
	case location == "" || problems == "":
		err = p.errAt(v, "distilled: location and problems are both required")
	case location == problems:
		// One member cannot hold a pointer and a list: no entry could
		// meet the contract (review rev52).
		err = p.errAt(v, "distilled: location and problems are both %q; an entry holds them in two members", location)
	}
	return location, problems, err
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
	case v.IsObject():
		return "an object"
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
