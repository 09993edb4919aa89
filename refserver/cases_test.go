package refserver

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// Case files hold exchanges as data; every case runs against the clean
// server and against every fault.
//
// testdata/http/*.txtar: sections alternate
//
//	-- request --           HTTP method line, header lines, blank line, body
//	-- response --          status line, header lines, blank line, body
//	-- response FAULT --    the reply under FAULT, when it differs from clean
//
// Only the headers the response section names are compared; "!Name" means
// the header must be absent. "$SESSION" stands for an Mcp-Session-Id
// (visible ASCII, at least 16 bytes) in a response, and for the last one
// received in a later request. "no response" means the connection gave
// none.
//
// testdata/stdio/*.txtar: -- stdin -- is fed to ServeStdio, -- stdout --
// is what it must write, -- stdout FAULT -- the same under FAULT, and
// -- error FAULT -- the error ServeStdio must return under FAULT (nil
// otherwise).
//
// A fault with no section of its own in a file must leave that file's
// replies exactly as the clean server sends them: that is how the tests
// show each fault breaks one thing and nothing else.

type exchange struct {
	request string
	want    map[string]string // by fault; "" is the clean server
}

type caseFile struct {
	name      string
	comment   string
	exchanges []exchange        // HTTP
	stdin     string            // stdio
	stdout    map[string]string // stdio, by fault
	errs      map[string]string // stdio, by fault
	faults    []string          // faults with a section of their own
}

func loadCases(t *testing.T, pattern string) []*caseFile {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no case files match %s", pattern)
	}
	known := map[string]bool{}
	for _, f := range Faults() {
		known[f.Name] = true
	}
	var cases []*caseFile
	for _, file := range files {
		a, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		c := &caseFile{name: strings.TrimSuffix(filepath.Base(file), ".txtar"), comment: string(a.Comment),
			stdout: map[string]string{}, errs: map[string]string{}}
		for _, f := range a.Files {
			kind, fault, _ := strings.Cut(f.Name, " ")
			if fault != "" && !known[fault] {
				t.Fatalf("%s: section %q names an unknown fault", file, f.Name)
			}
			if fault != "" && !slices.Contains(c.faults, fault) {
				c.faults = append(c.faults, fault)
			}
			data := strings.TrimSuffix(string(f.Data), "\n")
			switch {
			case kind == "request" && fault == "":
				c.exchanges = append(c.exchanges, exchange{request: data, want: map[string]string{}})
			case kind == "response" && len(c.exchanges) > 0:
				c.exchanges[len(c.exchanges)-1].want[fault] = data
			case kind == "stdin" && fault == "":
				c.stdin = string(f.Data)
			case kind == "stdout":
				c.stdout[fault] = string(f.Data)
			case kind == "error" && fault != "":
				c.errs[fault] = data
			default:
				t.Fatalf("%s: unexpected section %q", file, f.Name)
			}
		}
		for i, x := range c.exchanges {
			if _, ok := x.want[""]; !ok {
				t.Fatalf("%s: request %d has no clean response", file, i+1)
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// variants are the server configurations every case runs against.
func variants() []string {
	v := []string{""}
	for _, f := range Faults() {
		v = append(v, f.Name)
	}
	return v
}

func variantName(fault string) string {
	if fault == "" {
		return "clean"
	}
	return fault
}

// testStateKey is the case files' key for the ask tool's requestState:
// their requests carry the states it makes (TestAskStates prints them).
const testStateKey = "refserver-test"

func newServer(t *testing.T, fault string) *Server {
	t.Helper()
	s, err := New(Options{Fault: fault, Name: "refserver-test", Version: "1.2.3", StateKey: []byte(testStateKey)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var update = flag.Bool("update", false, "rewrite the case files' reply sections from what the server sends")

func TestHTTPCases(t *testing.T) {
	cases := loadCases(t, "testdata/http/*.txtar")
	if *update {
		for _, c := range cases {
			rewrite(t, c)
		}
		return
	}
	for _, c := range cases {
		for _, fault := range variants() {
			t.Run(c.name+"/"+variantName(fault), func(t *testing.T) {
				t.Parallel()
				var wants []string
				for _, x := range c.exchanges {
					want, ok := x.want[fault]
					if !ok {
						want = x.want[""]
					}
					wants = append(wants, want)
				}
				for i, got := range runHTTP(t, c, fault, wants) {
					if diff := cmp.Diff(wants[i], got); diff != "" {
						t.Errorf("request %d: reply mismatch (-want +got):\n%s", i+1, diff)
					}
				}
			})
		}
	}
}

// runHTTP sends a case's requests to a fresh server and renders each reply
// in the shape of the matching template.
func runHTTP(t *testing.T, c *caseFile, fault string, templates []string) []string {
	t.Helper()
	s := newServer(t, fault)
	ts := httptest.NewServer(s)
	// Release requests held by the hang fault before ts.Close, which
	// would wait for them.
	defer ts.Close()
	defer s.Close()
	vars := map[string]string{}
	var gots []string
	for i, x := range c.exchanges {
		gots = append(gots, doHTTP(t, ts, x.request, templates[i], vars, fault == faultHang))
	}
	return gots
}

var sessionPattern = regexp.MustCompile(`^[\x21-\x7e]{16,}$`)

// doHTTP sends one request written as text and renders the reply in the
// shape of want, so the two compare as text.
func doHTTP(t *testing.T, ts *httptest.Server, reqText, want string, vars map[string]string, mayHang bool) string {
	t.Helper()
	head, body, _ := strings.Cut(reqText, "\n\n")
	lines := strings.Split(head, "\n")
	timeout := 10 * time.Second
	if mayHang {
		timeout = 300 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, lines[0], ts.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			t.Fatalf("bad request header line %q", l)
		}
		if strings.Contains(v, "$SESSION") {
			v = strings.ReplaceAll(v, "$SESSION", vars["SESSION"])
		}
		if strings.EqualFold(k, "Host") {
			req.Host = v // net/http sends Host from here, never from Header
			continue
		}
		// Keep the name's case as written: the server must match header
		// names case-insensitively (T-HTTP-19).
		req.Header[k] = append(req.Header[k], v)
	}
	if _, set := req.Header["Accept"]; !set && req.Method == http.MethodPost {
		// What a conforming client sends unless the case says otherwise.
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		return "no response"
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return "no response"
	}
	return renderHTTP(resp, got, want, vars)
}

func renderHTTP(resp *http.Response, body []byte, want string, vars map[string]string) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(resp.StatusCode))
	wantHead, _, _ := strings.Cut(want, "\n\n")
	for _, l := range strings.Split(wantHead, "\n")[1:] {
		name, wantValue, _ := strings.Cut(strings.TrimPrefix(l, "!"), ": ")
		if name == "" {
			continue
		}
		vals, present := resp.Header[http.CanonicalHeaderKey(name)]
		got := strings.Join(vals, ", ")
		switch {
		case !present:
			b.WriteString("\n!" + name)
		case wantValue == "$SESSION" && sessionPattern.MatchString(got):
			vars["SESSION"] = got
			b.WriteString("\n" + name + ": $SESSION")
		default:
			b.WriteString("\n" + name + ": " + got)
		}
	}
	b.WriteString("\n\n")
	b.Write(body)
	return b.String()
}

func TestStdioCases(t *testing.T) {
	cases := loadCases(t, "testdata/stdio/*.txtar")
	if *update {
		for _, c := range cases {
			rewrite(t, c)
		}
		return
	}
	for _, c := range cases {
		for _, fault := range variants() {
			t.Run(c.name+"/"+variantName(fault), func(t *testing.T) {
				t.Parallel()
				want, ok := c.stdout[fault]
				if !ok {
					want = c.stdout[""]
				}
				got, err := runStdio(t, c, fault)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("stdout mismatch (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(c.errs[fault], errText(err)); diff != "" {
					t.Errorf("ServeStdio error mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func runStdio(t *testing.T, c *caseFile, fault string) (string, error) {
	var out bytes.Buffer
	err := newServer(t, fault).ServeStdio(context.Background(), strings.NewReader(c.stdin), &out)
	return out.String(), err
}

// rewrite regenerates a case file's reply sections (-update): the clean
// reply, then one section per fault whose reply differs. The request
// sections, the comment and the header names of each clean response (the
// template) are kept. Review the diff: it is the specification.
func rewrite(t *testing.T, c *caseFile) {
	t.Helper()
	a := &txtar.Archive{Comment: []byte(c.comment)}
	dir := "testdata/http"
	if len(c.exchanges) == 0 {
		dir = "testdata/stdio"
		clean, _ := runStdio(t, c, "")
		a.Files = append(a.Files, txtar.File{Name: "stdin", Data: []byte(c.stdin)}, txtar.File{Name: "stdout", Data: []byte(clean)})
		for _, f := range variants()[1:] {
			got, err := runStdio(t, c, f)
			if got != clean {
				a.Files = append(a.Files, txtar.File{Name: "stdout " + f, Data: []byte(got)})
			}
			if err != nil {
				a.Files = append(a.Files, txtar.File{Name: "error " + f, Data: []byte(err.Error() + "\n")})
			}
		}
	} else {
		var templates []string
		for _, x := range c.exchanges {
			templates = append(templates, x.want[""])
		}
		clean := runHTTP(t, c, "", templates)
		byFault := map[string][]string{}
		for _, f := range variants()[1:] {
			byFault[f] = runHTTP(t, c, f, clean)
		}
		for i, x := range c.exchanges {
			a.Files = append(a.Files, txtar.File{Name: "request", Data: []byte(x.request + "\n")},
				txtar.File{Name: "response", Data: []byte(clean[i] + "\n")})
			for _, f := range variants()[1:] {
				if got := byFault[f][i]; got != clean[i] {
					a.Files = append(a.Files, txtar.File{Name: "response " + f, Data: []byte(got + "\n")})
				}
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, c.name+".txtar"), txtar.Format(a), 0o644); err != nil {
		t.Fatal(err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestFaultsCovered: every fault changes at least one case, and a fault's
// section says something different from the clean one.
func TestFaultsCovered(t *testing.T) {
	cases := append(loadCases(t, "testdata/http/*.txtar"), loadCases(t, "testdata/stdio/*.txtar")...)
	covered := map[string]bool{}
	for _, c := range cases {
		for _, f := range c.faults {
			covered[f] = true
		}
		for i, x := range c.exchanges {
			for f, want := range x.want {
				if f != "" && want == x.want[""] {
					t.Errorf("%s request %d: section for %s repeats the clean reply", c.name, i+1, f)
				}
			}
		}
		for f, want := range c.stdout {
			if f != "" && want == c.stdout[""] {
				t.Errorf("%s: stdout for %s repeats the clean stdout", c.name, f)
			}
		}
	}
	for _, f := range Faults() {
		if !covered[f.Name] {
			t.Errorf("fault %s changes no case file", f.Name)
		}
	}
}

func TestCaseFilesDescribed(t *testing.T) {
	cases := append(loadCases(t, "testdata/http/*.txtar"), loadCases(t, "testdata/stdio/*.txtar")...)
	for _, c := range cases {
		if strings.TrimSpace(c.comment) == "" {
			t.Errorf("%s: no comment saying what the case shows", c.name)
		}
	}
}
