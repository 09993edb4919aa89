package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
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
// a misspelt key must not silently loosen the contract.
func ParseContract(raw []byte) (*Contract, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var f contractFile
	if err := dec.Decode(&f); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(raw[:min(int(se.Offset), len(raw))], []byte("\n"))
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
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
	for i, code := range f.Codes {
		if code.Name == "" {
			return nil, fmt.Errorf("codes[%d]: name is required", i)
		}
		if code.Code >= -32768 && code.Code <= -32100 {
			// -32000..-32099 is JSON-RPC's implementation-defined range, so a
			// contract may name codes there; the rest is reserved outright.
			return nil, fmt.Errorf("codes[%d]: %d lies in the range JSON-RPC reserves for pre-defined errors", i, code.Code)
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
