package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/refserver"
)

// echoKey wraps the reference server so that every error message it
// writes ends with the value of the request's header name: a server that
// leaks a credential (or names a tenant) in its errors.
func echoKey(h http.Handler, name string, escaped bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if key := r.Header.Get(name); key != "" {
			if escaped {
				key = strings.ReplaceAll(key, "/", `\/`) // as PHP's json_encode writes it
			}
			body = bytes.ReplaceAll(body, []byte(`"message":"`), []byte(`"message":"key `+key+`: `))
		}
		for k, vs := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = vs
			}
		}
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
}

// TestHeaderSecretsStayOut: a --header value the server echoes fails
// ERR4001, and reaches neither the report, nor the notes, nor the
// recording, where a marker stands in its place; lint of the recording
// fails ERR4001 as check did (an audit found the secret in all three,
// and lint passing what check failed). So too when the echo is escaped
// as PHP's json_encode writes a slash, and when the server refuses the
// key on every request and the run cannot start (a review found the
// reason quoting it, in every report).
func TestHeaderSecretsStayOut(t *testing.T) {
	const key = "sk/live/abcdef0123456789"
	for _, mode := range []string{"raw", "escaped", "refused"} {
		t.Run(mode, func(t *testing.T) {
			srv, err := refserver.New(refserver.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			var h http.Handler = echoKey(srv, "X-Api-Key", mode == "escaped")
			if mode == "refused" {
				h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusUnauthorized)
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"invalid API key %s"}}`, r.Header.Get("X-Api-Key"))
				})
			}
			hs := newLoopbackServer(h)
			defer hs.Close()
			dir := t.TempDir()
			rec, rep := filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "report.json")
			code, out, errOut := runMain(t, "", "check", hs.URL+"/mcp", "-H", "X-Api-Key: "+key, "--run", "method/unknown", "--record", rec, "--format", "json", "-o", rep, "--report", "junit="+filepath.Join(dir, "r.xml"), "--report", "html="+filepath.Join(dir, "r.html"))
			want := exitFindings
			if mode == "refused" {
				want = exitTarget
			}
			if code != want {
				t.Fatalf("check: exit %d, want %d\n%s\n%s", code, want, out, errOut)
			}
			outputs := map[string]string{"stdout": out, "stderr": errOut}
			for _, f := range []string{rec, rep, filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")} {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				outputs[filepath.Base(f)] = string(b)
			}
			for name, text := range outputs {
				// (As written, and escaped once or twice: a body string
				// the recording or a JSON report quotes is escaped again.)
				for _, form := range []string{key, strings.ReplaceAll(key, "/", `\/`), strings.ReplaceAll(key, "/", `\\/`)} {
					if strings.Contains(text, form) {
						t.Errorf("the --header value reached %s", name)
					}
				}
			}
			// send shows the exchange as check judged it: the key stays
			// out there too (a review found it printed in the body).
			scode, sout, serr := runMain(t, "", "send", hs.URL+"/mcp", "-H", "X-Api-Key: "+key, "--fixture", "method/unknown")
			for _, form := range []string{key, strings.ReplaceAll(key, "/", `\/`)} {
				if strings.Contains(sout+serr, form) {
					t.Errorf("send printed the --header value:\n%s\n%s", sout, serr)
				}
			}
			if mode == "refused" {
				if !strings.Contains(errOut, "redacted:X-Api-Key") || scode != exitTarget {
					t.Errorf("the reason does not show where the key stood (send: exit %d):\n%s", scode, errOut)
				}
				return
			}
			if scode != exitFindings || !strings.Contains(sout, "ERR4001") {
				t.Errorf("send: exit %d, want ERR4001 failing as in check\n%s", scode, sout)
			}
			if !strings.Contains(outputs["report.json"], `"ERR4001"`) || !strings.Contains(outputs["rec.jsonl"], `"redacted":["X-Api-Key"]`) {
				t.Fatalf("no ERR4001 in the report, or no redacted field in the recording:\n%s", outputs["rec.jsonl"])
			}
			code, lout, _ := runMain(t, "", "lint", rec)
			if code != exitFindings || !strings.Contains(lout, "fail ERR4001") || !strings.Contains(lout, "header given with --header is echoed") {
				t.Errorf("lint of the recording: exit %d, want ERR4001 failing as in check\n%s", code, lout)
			}
		})
	}
}

// TestUnnamedHeaderEchoWarns: the echo of a --header value under a name
// that says nothing of credentials (X-Tenant) warns ERR4001, in check,
// send and lint of the recording alike, and the value stays out of all
// of them: it may be a tenant's name a server rightly names, or a
// credential under an odd name (TestHeaderSecretsStayOut is the twin
// whose name says key, and fails).
func TestUnnamedHeaderEchoWarns(t *testing.T) {
	const tenant = "acme-production-eu"
	srv, err := refserver.New(refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := newLoopbackServer(echoKey(srv, "X-Tenant", false))
	defer hs.Close()
	dir := t.TempDir()
	rec, rep := filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "report.json")
	code, out, errOut := runMain(t, "", "check", hs.URL+"/mcp", "-H", "X-Tenant: "+tenant, "--run", "method/unknown", "--record", rec, "--format", "json", "-o", rep)
	if code != exitOK {
		t.Fatalf("check: exit %d, want %d (a warn)\n%s\n%s", code, exitOK, out, errOut)
	}
	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(b, `results.#(check=="ERR4001").status`).Str; got != "warn" {
		t.Errorf("ERR4001 in the report: %q, want warn", got)
	}
	scode, sout, serr := runMain(t, "", "send", hs.URL+"/mcp", "-H", "X-Tenant: "+tenant, "--fixture", "method/unknown")
	lcode, lout, lerr := runMain(t, "", "lint", rec)
	for name, text := range map[string]string{"check": out + errOut + string(b), "recording": string(recorded), "send": sout + serr, "lint": lout + lerr} {
		if strings.Contains(text, tenant) {
			t.Errorf("the --header value reached %s", name)
		}
	}
	for name, r := range map[string]struct {
		code exitCode
		out  string
	}{"send": {scode, sout}, "lint": {lcode, lout}} {
		if r.code != exitOK || !strings.Contains(r.out, "warn ERR4001") || !strings.Contains(r.out, "X-Tenant header given with --header is echoed") {
			t.Errorf("%s: exit %d, want ERR4001 warning as in check\n%s", name, r.code, r.out)
		}
	}
}
