package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/refserver"
)

// echoKey wraps the reference server so that every error message it
// writes ends with the request's X-Api-Key value: a server that leaks a
// credential into its errors.
func echoKey(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if key := r.Header.Get("X-Api-Key"); key != "" {
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
// and lint passing what check failed).
func TestHeaderSecretsStayOut(t *testing.T) {
	const key = "sk-live-abcdef0123456789"
	srv, err := refserver.New(refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := newLoopbackServer(echoKey(srv))
	defer hs.Close()
	dir := t.TempDir()
	rec, rep := filepath.Join(dir, "rec.jsonl"), filepath.Join(dir, "report.json")
	code, out, errOut := runMain(t, "", "check", hs.URL+"/mcp", "-H", "X-Api-Key: "+key, "--run", "method/unknown", "--record", rec, "--format", "json", "-o", rep)
	if code != exitFindings {
		t.Fatalf("check: exit %d, want %d\n%s\n%s", code, exitFindings, out, errOut)
	}
	recorded, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"stdout": out, "stderr": errOut, "recording": string(recorded), "report": string(report)} {
		if strings.Contains(text, key) {
			t.Errorf("the --header value reached the %s", name)
		}
	}
	if !strings.Contains(string(report), `"ERR4001"`) || !strings.Contains(string(recorded), strings.Trim(envelope.SecretMarker("X-Api-Key"), "<>")) || !strings.Contains(string(recorded), `"redacted":["X-Api-Key"]`) {
		t.Fatalf("no ERR4001 in the report, or no marker in the recording:\n%s\n%s", report, recorded)
	}
	code, lout, _ := runMain(t, "", "lint", rec)
	if code != exitFindings || !strings.Contains(lout, "fail ERR4001") || !strings.Contains(lout, "header given with --header is echoed") {
		t.Errorf("lint of the recording: exit %d, want ERR4001 failing as in check\n%s", code, lout)
	}
}
