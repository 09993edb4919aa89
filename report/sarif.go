package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wymcp/wymcp-check/checks"
)

// SARIF 2.1.0 (OASIS), the format GitHub code scanning, Azure DevOps and
// GitLab read natively. One log, one run:
//
//	{"$schema", "version":"2.1.0", "runs":[{
//	   "results":[{"ruleId", "level", "message", "locations", "partialFingerprints",
//	               "suppressions"?, "properties":{"status", "fixture", "path"?, "area", "rules"?}}],
//	   "tool":{"driver":{"name", "version", "informationUri", "rules":[…]}},
//	   "invocations":[{"executionSuccessful", "startTimeUtc", "endTimeUtc",
//	                   "toolExecutionNotifications"?, "toolConfigurationNotifications"?}],
//	   "properties":{"target", "contract", "protocol", …, "gate", "summary"}}]}
//
// SARIF results are findings: a fail or warn is one result per finding
// (as the JSON report has one row per finding), a could-not-judge is one
// result, and passes and skips are none. rules lists the checks that
// produced a result or have a stale baseline entry, sorted by ID. Results stream as they come; the
// rules, which are known only at the end, follow them (JSON objects are
// unordered), so memory grows with the number of checks, not of
// exchanges.
//
// Locations. A server has no source file. Each result has a logical
// location (the fixture, kind "module") and, because GitHub code scanning
// refuses a whole log in which one result has no physical location, a
// physical one too: for lint the transcript file and line, for a live run
// a stable relative URI "wymcp-check/FIXTURE", line 1, that names no
// file of the repository (code scanning shows the alert without a
// preview).
//
// Identity. partialFingerprints[sarifFingerprintKey] hashes the
// transcript file (lint), the fixture, the check and the finding's path,
// never a line, a time or a quoted value, so that code scanning matches
// one finding across runs; a second finding of one check at one path in
// one exchange gets its ordinal.
//
// The gate. A known failure of the baseline is reported with a
// suppression (kind "external", status "accepted", the baseline's reason
// as justification): SARIF consumers hide suppressed results from their
// counts, as the gate does. baselineState is not used: it compares with a
// previous SARIF run and, once on one result, must be on all. A stale
// baseline entry is a configuration problem of the run: an error
// toolConfigurationNotification whose associatedRule is its check (one
// of rules, then, result or not). A run that was aborted, interrupted,
// cut short by its deadline or fed input it could not use has
// executionSuccessful false and an error toolExecutionNotification
// saying why, so that a gate reading the log cannot take a run that
// judged nothing, or not everything, for a clean one. Every
// notification's descriptor is one of driver.notifications, referenced
// by id and index, as a rule is. With --fail-on
// warn a warning's level is "error", as it fails the gate (status keeps
// "warn"). run.properties carries the gate's verdict and the counts, as
// the JSON report's summary does. All text from the server or the user
// goes through Sanitize.
type sarifWriter struct {
	w     io.Writer
	meta  Meta
	first bool
	// used are the checks that produced a result: the log's rules.
	used map[string]*checks.Check
	// ordinal counts the results of the current exchange by identity,
	// for the rare second finding at one path.
	ordinal map[string]int
	buf     []byte
	// dir is Options.Dir; file and artifact cache the last transcript
	// path and its spelling in the log (lint's results share one).
	dir, file, artifact string
}

const (
	// sarifSchemaURI is the OASIS schema of SARIF 2.1.0 (errata 01), the
	// one report/testdata/sarif-schema-2.1.0.json is a copy of.
	sarifSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	// sarifToolURI is the checker's home: its module path.
	sarifToolURI = "https://github.com/wymcp/wymcp-check"
	// sarifFingerprintKey names the fingerprint; its version changes if
	// what it hashes ever does.
	sarifFingerprintKey = "wymcpFinding/v1"
	// sarifFixtureRoot prefixes the URI of a live run's fixture.
	sarifFixtureRoot = "wymcp-check/"
)

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Properties          sarifResultProps   `json:"properties"`
}

type sarifResultProps struct {
	Status  string `json:"status"` // fail, warn or error (could not judge)
	Fixture string `json:"fixture"`
	Path    string `json:"path,omitempty"`
	Area    string `json:"area"`
	// Rules are the spec's rules (T-…) the finding breaks, read as the
	// JSON report's rules are.
	Rules []string `json:"rules,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogical struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Justification string `json:"justification"`
}

type sarifRule struct {
	ID                   string          `json:"id"`
	ShortDescription     sarifText       `json:"shortDescription"`
	FullDescription      *sarifText      `json:"fullDescription,omitempty"`
	Help                 sarifText       `json:"help"`
	DefaultConfiguration sarifRuleConfig `json:"defaultConfiguration"`
	Properties           sarifRuleProps  `json:"properties"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
}

type sarifRuleProps struct {
	Area     string   `json:"area"`
	Severity string   `json:"severity"` // the check's: error (MUST) or warning (SHOULD)
	Spec     string   `json:"spec"`
	Tags     []string `json:"tags"`
}

type sarifInvocation struct {
	ExecutionSuccessful            bool                `json:"executionSuccessful"`
	StartTimeUTC                   string              `json:"startTimeUtc"`
	EndTimeUTC                     string              `json:"endTimeUtc"`
	ToolExecutionNotifications     []sarifNotification `json:"toolExecutionNotifications,omitempty"`
	ToolConfigurationNotifications []sarifNotification `json:"toolConfigurationNotifications,omitempty"`
}

type sarifNotification struct {
	Descriptor     sarifRef        `json:"descriptor"`
	AssociatedRule *sarifRef       `json:"associatedRule,omitempty"`
	Level          string          `json:"level"`
	Message        sarifText       `json:"message"`
	Locations      []sarifLocation `json:"locations,omitempty"`
}

// A sarifRef is a reportingDescriptorReference: it names a rule of
// driver.rules or a notification descriptor of driver.notifications by
// id and by its index there (SARIF 2.1.0 §3.52), so a consumer can
// resolve it.
type sarifRef struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
}

// A sarifDescriptor is a reportingDescriptor of driver.notifications.
type sarifDescriptor struct {
	ID                   string          `json:"id"`
	ShortDescription     sarifText       `json:"shortDescription"`
	DefaultConfiguration sarifRuleConfig `json:"defaultConfiguration"`
}

// sarifNotificationKinds are the notifications a log may hold, in the
// order driver.notifications lists those it references.
var sarifNotificationKinds = []sarifDescriptor{
	{"aborted", sarifText{"The target could not be driven: nothing was judged"}, sarifRuleConfig{"error"}},
	{"interrupted", sarifText{"The run was interrupted: what was not run is not reported"}, sarifRuleConfig{"error"}},
	{"deadline", sarifText{"The run's deadline passed before every fixture was sent: the rest could not be judged"}, sarifRuleConfig{"error"}},
	{"invalid-input", sarifText{"Input that could not be used: the run is incomplete"}, sarifRuleConfig{"error"}},
	{"stale-baseline-entry", sarifText{"A baseline entry no longer fails: remove it from the baseline"}, sarifRuleConfig{"error"}},
	{"note", sarifText{"A note on the run"}, sarifRuleConfig{"note"}},
}

type sarifRunProps struct {
	Target          string       `json:"target"`
	Contract        string       `json:"contract"`
	Protocol        string       `json:"protocol"`
	ProtocolVersion string       `json:"protocolVersion,omitempty"`
	Negotiation     string       `json:"negotiation,omitempty"`
	Baseline        string       `json:"baseline,omitempty"`
	FailOn          string       `json:"failOn"`
	Gate            string       `json:"gate"`
	Summary         sarifSummary `json:"summary"`
}

type sarifSummary struct {
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Warn  int `json:"warn"`
	Skip  int `json:"skip"`
	Error int `json:"error"`
	Known int `json:"known"`
	Stale int `json:"stale"`
}

func (s *sarifWriter) Begin(m Meta) error {
	s.meta = m
	s.first = true
	s.used = map[string]*checks.Check{}
	s.ordinal = map[string]int{}
	head, err := json.Marshal(struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
	}{sarifSchemaURI, "2.1.0"})
	if err != nil {
		return err
	}
	// Stream: open the run's results, leave them open.
	head = append(head[:len(head)-1], `,"runs":[{"results":[`...)
	_, err = s.w.Write(head)
	return err
}

func (s *sarifWriter) Exchange(r *Result) error {
	clear(s.ordinal)
	sc := scopeOf(r)
	b := s.buf[:0]
	var err error
	for i := range r.Verdicts {
		v := &r.Verdicts[i]
		switch v.Status {
		case checks.StatusFail, checks.StatusWarn:
			if len(v.Findings) == 0 {
				// Not made by the judge; should a verdict come without
				// findings, it is still a result.
				b, err = s.result(b, r, v, v.Status, "", v.Check.Title, nil)
			}
			for k := range v.Findings {
				f := &v.Findings[k]
				b, err = s.result(b, r, v, f.Status, f.Path, f.Message, findingRules(v.Check, *f, sc))
				if err != nil {
					break
				}
			}
		case checks.StatusError:
			b, err = s.result(b, r, v, checks.StatusError, "", "could not judge: "+v.Reason, nil)
		}
		if err != nil {
			return err
		}
	}
	s.buf = b
	if len(b) == 0 {
		return nil
	}
	_, err = s.w.Write(escapeInvisible(b))
	return err
}

// result appends one result.
func (s *sarifWriter) result(b []byte, r *Result, v *checks.Verdict, st checks.Status, path, msg string, rules []string) ([]byte, error) {
	s.used[v.Check.ID] = v.Check
	text := Sanitize(msg)
	if path != "" {
		text = Sanitize(path) + ": " + text
	}
	res := sarifResult{
		RuleID:              v.Check.ID,
		Level:               s.level(st),
		Message:             sarifText{text},
		Locations:           []sarifLocation{s.where(r)},
		PartialFingerprints: map[string]string{sarifFingerprintKey: s.fingerprint(r, v.Check.ID, path, st == checks.StatusError)},
		Properties:          sarifResultProps{Status: string(st), Fixture: Sanitize(r.Fixture), Path: Sanitize(path), Area: string(v.Check.Area), Rules: rules},
	}
	if reason, ok := r.Known[v.Check.ID]; ok {
		res.Suppressions = []sarifSuppression{{Kind: "external", Status: "accepted", Justification: "known failure (baseline): " + Sanitize(reason)}}
	}
	enc, err := json.Marshal(res)
	if err != nil {
		return b, err
	}
	if s.first {
		s.first = false
		b = append(b, '\n')
	} else {
		b = append(b, ",\n"...)
	}
	return append(b, enc...), nil
}

// level maps a status to a SARIF level. A fail is an error and a warning
// a warning, or an error with --fail-on warn, where it fails the gate.
//
// A could-not-judge (a timeout, a dead connection, the checker's own
// limits) is an error too. SARIF's own word for it is kind "open" ("not
// enough information to decide"), but that kind forces level "none",
// which code scanning shows as a note and CI gates let through: a run
// whose exchanges could not be judged would read as clean, where the
// exit code fails it (Gates). The message says "could not judge" and
// properties.status "error", so nobody takes it for the server's
// breach.
func (s *sarifWriter) level(st checks.Status) string {
	if st == checks.StatusWarn && !s.meta.FailOnWarn {
		return "warning"
	}
	return "error"
}

// where is a result's location: the fixture as a logical location,
// and a physical one (see sarifWriter).
func (s *sarifWriter) where(r *Result) sarifLocation {
	p := &sarifPhysical{}
	if file := s.artifactOf(r.File); file != "" {
		p.ArtifactLocation.URI = sarifFileURI(file)
	} else {
		p.ArtifactLocation.URI = (&url.URL{Path: sarifFixtureRoot + r.Fixture}).String()
	}
	// A live run's finding is about the whole fixture: line 1 is the
	// least region (GitHub's validator wants one on every result).
	p.Region = &sarifRegion{StartLine: max(r.Line, 1)}
	return sarifLocation{PhysicalLocation: p, LogicalLocations: []sarifLogical{{Name: Sanitize(r.Fixture), Kind: "module"}}}
}

// artifactOf is how the log names a transcript file, in its URIs and
// fingerprints: cleaned, relative to dir when under it (else absolute,
// when dir is known), with slashes. A path spelled two ways would be two
// artifacts and, fingerprinted, two alerts for one finding. "" for no
// file, and for "-", stdin, which is no file to point at.
func (s *sarifWriter) artifactOf(file string) string {
	if file == "" || file == "-" {
		return ""
	}
	if file == s.file {
		return s.artifact
	}
	s.file, s.artifact = file, CleanPath(s.dir, file)
	return s.artifact
}

// CleanPath is file's one spelling: cleaned, relative to dir when inside
// it (absolute otherwise, when dir is known), with slashes. A transcript
// named "t.jsonl", "./t.jsonl" or "$PWD/t.jsonl" is one file to a SARIF
// log and to a baseline's keys.
func CleanPath(dir, file string) string {
	p := filepath.Clean(file)
	if dir != "" {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, p)
		}
		p = abs
		if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			p = rel
		}
	}
	return filepath.ToSlash(p)
}

// sarifFileURI is a transcript path (slashed, see artifactOf) as a URI
// reference: relative paths stay relative (code scanning reads them
// from the repository's root), absolute ones become file URIs.
func sarifFileURI(slash string) string {
	if filepath.IsAbs(filepath.FromSlash(slash)) {
		if !strings.HasPrefix(slash, "/") {
			slash = "/" + slash // a Windows drive
		}
		return (&url.URL{Scheme: "file", Path: slash}).String()
	}
	return (&url.URL{Path: slash}).String()
}

// fingerprint identifies a finding across runs: the transcript file,
// fixture, check and path, whether it could be judged, and its ordinal
// among the same in the exchange.
func (s *sarifWriter) fingerprint(r *Result, check, path string, unjudged bool) string {
	file := s.artifactOf(r.File)
	id := strings.Join([]string{file, r.Fixture, check, path, strconv.FormatBool(unjudged)}, "\x00")
	s.ordinal[id]++
	if n := s.ordinal[id]; n > 1 {
		id += "\x00" + strconv.Itoa(n)
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}

func (s *sarifWriter) End(sum Summary) error {
	// A stale entry's notification names its check as associatedRule,
	// which must be one of driver.rules, though no result used it.
	for _, e := range sum.Stale {
		if c := checks.Lookup(e.Check); c != nil {
			s.used[c.ID] = c
		}
	}
	ids := make([]string, 0, len(s.used))
	for id := range s.used {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	rules := make([]sarifRule, 0, len(ids))
	for _, id := range ids {
		rules = append(rules, sarifRuleOf(s.used[id]))
	}
	// The notifications' descriptors: those this log references, in the
	// order of sarifNotificationKinds.
	runLevel := []struct{ id, why string }{
		{"aborted", sum.Aborted}, {"interrupted", sum.Interrupted}, {"deadline", sum.Deadline}, {"invalid-input", sum.Invalid},
	}
	wanted := map[string]bool{"stale-baseline-entry": len(sum.Stale) > 0, "note": len(sum.Notes) > 0}
	for _, n := range runLevel {
		wanted[n.id] = n.why != ""
	}
	var kinds []sarifDescriptor
	kind := map[string]sarifRef{}
	for _, d := range sarifNotificationKinds {
		if wanted[d.ID] {
			kind[d.ID] = sarifRef{d.ID, len(kinds)}
			kinds = append(kinds, d)
		}
	}
	inv := sarifInvocation{
		ExecutionSuccessful: sum.Aborted == "" && sum.Interrupted == "" && sum.Deadline == "" && sum.Invalid == "",
		StartTimeUTC:        sarifTime(s.meta.Started),
		EndTimeUTC:          sarifTime(s.meta.Started.Add(sum.Duration)),
	}
	for _, n := range runLevel {
		if n.why != "" {
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
				sarifNotification{Descriptor: kind[n.id], Level: "error", Message: sarifText{sarifNotice(n.id) + Sanitize(n.why)}})
		}
	}
	for _, n := range sum.Notes {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
			sarifNotification{Descriptor: kind["note"], Level: "note", Message: sarifText{Sanitize(n)}})
	}
	for _, e := range sum.Stale {
		n := sarifNotification{
			Descriptor: kind["stale-baseline-entry"],
			Level:      "error",
			Message: sarifText{"stale baseline entry: " + Sanitize(e.Fixture) + " " + Sanitize(e.Check) +
				" no longer fails; remove it from the baseline (its reason: " + Sanitize(e.Reason) + ")"},
			Locations: []sarifLocation{{LogicalLocations: []sarifLogical{{Name: Sanitize(e.Fixture), Kind: "module"}}}},
		}
		if c := checks.Lookup(e.Check); c != nil {
			i, _ := slices.BinarySearch(ids, c.ID)
			n.AssociatedRule = &sarifRef{c.ID, i}
		}
		inv.ToolConfigurationNotifications = append(inv.ToolConfigurationNotifications, n)
	}
	failOn := "fail"
	if s.meta.FailOnWarn {
		failOn = "warn"
	}
	tail := struct {
		Tool struct {
			Driver struct {
				Name           string            `json:"name"`
				Version        string            `json:"version,omitempty"`
				InformationURI string            `json:"informationUri"`
				Rules          []sarifRule       `json:"rules"`
				Notifications  []sarifDescriptor `json:"notifications,omitempty"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []sarifInvocation `json:"invocations"`
		Properties  sarifRunProps     `json:"properties"`
	}{}
	d := &tail.Tool.Driver
	d.Name, d.Version, d.InformationURI, d.Rules, d.Notifications = "wymcp-check", s.meta.Version, sarifToolURI, rules, kinds
	tail.Invocations = []sarifInvocation{inv}
	tail.Properties = sarifRunProps{
		Target: Sanitize(s.meta.Target), Contract: Sanitize(s.meta.Contract), Protocol: Sanitize(s.meta.Protocol),
		ProtocolVersion: Sanitize(sum.Protocol), Negotiation: Sanitize(sum.Negotiation), Baseline: Sanitize(s.meta.Baseline),
		FailOn: failOn, Gate: strings.ToLower(sum.verdictWord(s.meta.FailOnWarn)),
		Summary: sarifSummary{sum.Pass, sum.Fail, sum.Warn, sum.Skip, sum.Error, sum.Known, len(sum.Stale)},
	}
	b, err := json.Marshal(tail)
	if err != nil {
		return err
	}
	// The tail's members continue the open run.
	out := append([]byte("\n],"), b[1:len(b)-1]...)
	out = append(out, "}]}\n"...)
	_, err = s.w.Write(escapeInvisible(out))
	return err
}

// sarifNotice opens the message of a run-level notification.
func sarifNotice(id string) string {
	switch id {
	case "aborted":
		return "the target could not be driven (what was judged before is reported): "
	case "interrupted":
		return "the run was interrupted; what was not run is not reported: "
	case "deadline":
		return "the run is incomplete: "
	}
	return "input that could not be used (the run is incomplete): "
}

// sarifRuleOf describes a check as a SARIF rule: its title, the first
// paragraph of its doc, and the whole doc with its spec reference as
// help.
func sarifRuleOf(c *checks.Check) sarifRule {
	r := sarifRule{
		ID:                   c.ID,
		ShortDescription:     sarifText{c.Title},
		Help:                 sarifText{strings.TrimSpace(c.Doc) + "\n\nSpec: " + c.SpecRef + "\nMore: wymcp-check explain " + c.ID},
		DefaultConfiguration: sarifRuleConfig{Level: "error"},
		Properties:           sarifRuleProps{Area: string(c.Area), Severity: string(c.Severity), Spec: c.SpecRef, Tags: []string{"mcp", "conformance", string(c.Area)}},
	}
	if c.Severity == checks.SHOULD {
		r.DefaultConfiguration.Level = "warning"
	}
	if first, _, _ := strings.Cut(strings.TrimSpace(c.Doc), "\n\n"); first != "" {
		r.FullDescription = &sarifText{strings.Join(strings.Fields(first), " ")}
	}
	return r
}

func sarifTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
