package envelope_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/wymcp/wymcp-check/envelope"
)

const codedReply = `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func zlibbed(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := zlib.NewWriter(&out)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func rawDeflated(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, flate.DefaultCompression)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestCodings(t *testing.T) {
	for _, tt := range []struct {
		vs   []string
		want []string
	}{
		{nil, nil},
		{[]string{"identity"}, nil},
		{[]string{"gzip"}, []string{"gzip"}},
		{[]string{"deflate, GZIP"}, []string{"deflate", "GZIP"}},
		{[]string{"deflate", " identity ,gzip,"}, []string{"deflate", "gzip"}},
	} {
		h := http.Header{}
		for _, v := range tt.vs {
			h.Add("Content-Encoding", v)
		}
		if diff := cmp.Diff(tt.want, envelope.Codings(h)); diff != "" {
			t.Errorf("Codings(%q) (-want +got):\n%s", tt.vs, diff)
		}
	}
}

// A coded reply is judged as the client reads it, decoded; one the
// checker cannot decode is not judged at all (SplitErr: could not
// judge), never judged as the server's malformed JSON.
func TestReadReplyDecodes(t *testing.T) {
	plain := []byte(codedReply)
	sse := []byte("event: message\ndata: " + codedReply + "\n\n")
	bomb := gzipped(t, make([]byte, 10<<20))
	corrupt := gzipped(t, plain)
	corrupt[len(corrupt)-6] ^= 0xff // the CRC-32
	tests := []struct {
		name     string
		coding   string
		ctype    string
		body     []byte
		cut      bool
		decoded  bool  // the response was found, and is the plain reply
		err      error // SplitErr wraps it
		errMatch string
	}{
		{name: "identity", coding: "", body: plain, decoded: true},
		{name: "identity named", coding: "identity", body: plain, decoded: true},
		{name: "gzip", coding: "gzip", body: gzipped(t, plain), decoded: true},
		{name: "x-gzip in capitals", coding: "X-GZIP", body: gzipped(t, plain), decoded: true},
		{name: "gzip SSE", coding: "gzip", ctype: "text/event-stream", body: gzipped(t, sse), decoded: true},
		{name: "deflate is zlib", coding: "deflate", body: zlibbed(t, plain), decoded: true},
		{name: "raw deflate read as browsers do", coding: "deflate", body: rawDeflated(t, plain), decoded: true},
		{name: "two codings, last applied first", coding: "deflate, gzip", body: gzipped(t, zlibbed(t, plain)), decoded: true},
		{name: "gzip cut short: no message, judged as cut", coding: "gzip", body: gzipped(t, plain)[:20], cut: true},

		{name: "gzip named, sent plain", coding: "gzip", body: plain, err: gzip.ErrHeader, errMatch: "Content-Encoding gzip: the body does not decode (gzip: invalid header)"},
		{name: "corrupt gzip", coding: "gzip", body: corrupt, err: gzip.ErrChecksum, errMatch: "does not decode (gzip: invalid checksum)"},
		{name: "gzip ends early, not cut", coding: "gzip", body: gzipped(t, plain)[:20], err: io.ErrUnexpectedEOF, errMatch: "unexpected EOF"},
		{name: "deflate, neither zlib nor raw", coding: "deflate", body: []byte{0xff, 0xff, 0xff}, errMatch: "Content-Encoding deflate: the body does not decode"},
		{name: "bomb", coding: "gzip", body: bomb, err: envelope.ErrDecodedTooLarge, errMatch: "Content-Encoding gzip: the body decodes to more than 4194304 bytes, the checker's bound"},
		{name: "bomb under an SSE stream", coding: "gzip", ctype: "text/event-stream", body: bomb, err: envelope.ErrDecodedTooLarge},
		{name: "br", coding: "br", body: []byte{0x0b, 0x02, 0x80}, err: envelope.ErrUnknownCoding, errMatch: "Content-Encoding br: a coding the checker does not decode"},
		{name: "zstd after gzip", coding: "gzip, zstd", body: []byte{0x28, 0xb5, 0x2f, 0xfd}, err: envelope.ErrUnknownCoding, errMatch: "Content-Encoding zstd:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctype := tt.ctype
			if ctype == "" {
				ctype = "application/json"
			}
			h := http.Header{"Content-Type": {ctype}}
			if tt.coding != "" {
				h.Set("Content-Encoding", tt.coding)
			}
			resp := &envelope.Response{Status: 200, Header: h, Body: tt.body, Cut: tt.cut}
			r := envelope.ReadReply(resp, envelope.ReadOptions{})
			if tt.err == nil && tt.errMatch == "" {
				if r.SplitErr != nil {
					t.Fatalf("SplitErr = %v", r.SplitErr)
				}
				if tt.decoded != r.Has() {
					t.Fatalf("Has() = %v, want %v", r.Has(), tt.decoded)
				}
				if tt.decoded && string(r.Response.Raw) != codedReply {
					t.Errorf("response %q, want %q", r.Response.Raw, codedReply)
				}
				return
			}
			var ce *envelope.CodingError
			if !errors.As(r.SplitErr, &ce) {
				t.Fatalf("SplitErr = %v, want a *CodingError", r.SplitErr)
			}
			if tt.err != nil && !errors.Is(r.SplitErr, tt.err) {
				t.Errorf("SplitErr = %v, want it to wrap %v", r.SplitErr, tt.err)
			}
			if !strings.Contains(r.SplitErr.Error(), tt.errMatch) {
				t.Errorf("SplitErr = %q, want it to hold %q", r.SplitErr, tt.errMatch)
			}
			if len(r.Messages) != 0 || r.Has() {
				t.Errorf("%d messages judged from a body that was not read", len(r.Messages))
			}
		})
	}
}

// The body is left as it came: a transcript keeps what the server sent.
func TestReadReplyLeavesTheBody(t *testing.T) {
	body := gzipped(t, []byte(codedReply))
	keep := bytes.Clone(body)
	resp := &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}, Body: body}
	r := envelope.ReadReply(resp, envelope.ReadOptions{})
	if !bytes.Equal(resp.Body, keep) {
		t.Error("ReadReply changed the response's body")
	}
	if !r.Has() || string(r.Response.Raw) != codedReply {
		t.Errorf("the response is not the decoded body")
	}
}

// A bomb never decodes past the bound, whatever its ratio.
func TestDecodeBodyBound(t *testing.T) {
	bomb := gzipped(t, make([]byte, 10<<20))
	out, err := envelope.DecodeBody(bomb, []string{"gzip"}, 1<<20)
	if !errors.Is(err, envelope.ErrDecodedTooLarge) || len(out) != 1<<20 {
		t.Fatalf("DecodeBody = %d bytes, %v; want 1 MiB and ErrDecodedTooLarge", len(out), err)
	}
	out, err = envelope.DecodeBody(bomb, []string{"gzip"}, 10<<20)
	if err != nil || len(out) != 10<<20 {
		t.Fatalf("DecodeBody at a bound it fits = %d bytes, %v", len(out), err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	envelope.DecodeBody(bomb, []string{"gzip"}, 1<<20)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 3<<20 {
		t.Errorf("decoding a 10 MiB bomb to a 1 MiB bound allocated %d bytes", n)
	}
}

// An identity reply costs nothing more than before.
func TestReadReplyIdentityAllocs(t *testing.T) {
	resp := &envelope.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(codedReply)}
	plain := testing.AllocsPerRun(100, func() { envelope.ReadReply(resp, envelope.ReadOptions{}) })
	resp.Header.Set("Content-Encoding", "identity")
	named := testing.AllocsPerRun(100, func() { envelope.ReadReply(resp, envelope.ReadOptions{}) })
	if named > plain+1 {
		t.Errorf("identity named: %v allocations, plain %v", named, plain)
	}
}

// Codings stacked past the bound are not undone (each layer holds a
// decompressor's window: thousands cost gigabytes); up to it they are.
func TestDecodeBodyStackedCodings(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	var codings []string
	for range envelope.MaxCodings {
		body = gzipped(t, body)
		codings = append(codings, "gzip")
	}
	if out, err := envelope.DecodeBody(body, codings, 1<<20); err != nil || string(out) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("%d stacked codings: %q, %v", len(codings), out, err)
	}
	if _, err := envelope.DecodeBody(gzipped(t, body), append(codings, "gzip"), 1<<20); !errors.Is(err, envelope.ErrTooManyCodings) {
		t.Fatalf("%d stacked codings: err %v, want ErrTooManyCodings", len(codings)+1, err)
	}
}

// A decoder's input that fails (a connection reset, a timeout, a
// reader's own bound) fails the decoder with that error, not a
// *CodingError: the coding is not at fault, and a transport must tell
// the server's silence from a body it cannot decode. At the header, in
// the data, and under stacked codings alike.
func TestNewDecoderPassesInputErrors(t *testing.T) {
	errBroken := errors.New("connection broken")
	coded := gzipped(t, []byte(codedReply))
	tests := []struct {
		name    string
		codings []string
		body    []byte
		cut     int // bytes read before the input fails
	}{
		{name: "gzip, in its header", codings: []string{"gzip"}, body: coded, cut: 4},
		{name: "gzip, in its data", codings: []string{"gzip"}, body: coded, cut: 14},
		{name: "deflate, in its header", codings: []string{"deflate"}, body: zlibbed(t, []byte(codedReply)), cut: 1},
		{name: "stacked", codings: []string{"deflate", "gzip"}, body: gzipped(t, zlibbed(t, []byte(codedReply))), cut: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := io.MultiReader(bytes.NewReader(tt.body[:tt.cut]), iotest.ErrReader(errBroken))
			var err error
			if r, nerr := envelope.NewDecoder(in, tt.codings); nerr != nil {
				err = nerr
			} else {
				_, err = io.ReadAll(r)
			}
			var ce *envelope.CodingError
			if !errors.Is(err, errBroken) || errors.As(err, &ce) {
				t.Errorf("err %v (%T), want the input's own error", err, err)
			}
		})
	}
}
