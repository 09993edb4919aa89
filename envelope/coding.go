package envelope

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxCodings bounds the content codings stacked on one body (curl
// stops at 5): more is the checker's limit, not the server's fault.
const MaxCodings = 4

// ErrTooManyCodings: a body with more than MaxCodings codings.
var ErrTooManyCodings = errors.New("more content codings than the checker undoes")

// MaxDecoded bounds a body ReadReply decodes from its Content-Encoding:
// the default byte bound of a reply (transport.DefaultMaxBytes,
// proxy.DefaultMaxBytes), so a decompression bomb costs no more memory
// than the largest reply read as it came. Past it the body is not
// judged, as a reply past the byte bound is not. Only a recording still
// coded meets it (one written by hand, or before the transport decoded
// as it read): the transport and the relay decode as the bytes arrive,
// within the run's own byte bound, and record the body decoded.
const MaxDecoded = 4 << 20

// Why a coded body could not be decoded; a CodingError wraps one.
var (
	// ErrUnknownCoding: a coding the checker does not read (br, zstd).
	ErrUnknownCoding = errors.New("a coding the checker does not decode (it decodes gzip, x-gzip and deflate)")
	// ErrDecodedTooLarge: the body decodes past the bound.
	ErrDecodedTooLarge = errors.New("the body decodes past the checker's byte bound")
)

// A CodingError says why a body's Content-Encoding could not be undone:
// the message is "could not judge", never a finding against the server's
// JSON, since its JSON was never seen.
type CodingError struct {
	Coding string // as the header names it
	Max    int64  // the bound, for ErrDecodedTooLarge
	Err    error  // ErrUnknownCoding, ErrDecodedTooLarge, or the decoder's own
}

func (e *CodingError) Error() string {
	switch {
	case errors.Is(e.Err, ErrUnknownCoding):
		return fmt.Sprintf("Content-Encoding %s: %v", e.Coding, e.Err)
	case errors.Is(e.Err, ErrDecodedTooLarge):
		return fmt.Sprintf("Content-Encoding %s: the body decodes to more than %d bytes, the checker's bound", e.Coding, e.Max)
	}
	return fmt.Sprintf("Content-Encoding %s: the body does not decode (%v)", e.Coding, e.Err)
}

func (e *CodingError) Unwrap() error { return e.Err }

// Corrupt: the decoder itself refused the bytes (no gzip header, a bad
// checksum, a corrupt deflate stream): the body is no valid encoding in
// the coding its header names, which no client can read, the server's
// fault. A body that ends early is not: zero padding after a whole gzip
// member reads so (Go's reader looks for a next member), and a client
// that stops at the first member reads it (review rev58). The other
// causes are the checker's own limits.
func (e *CodingError) Corrupt() bool {
	return !errors.Is(e.Err, ErrUnknownCoding) && !errors.Is(e.Err, ErrDecodedTooLarge) && !errors.Is(e.Err, ErrTooManyCodings) &&
		!errors.Is(e.Err, io.ErrUnexpectedEOF)
}

// Codings returns the content codings of a message with header h, in the
// order they were applied (RFC 9110 §8.4: a list, over one field line or
// several), identity and empty members left out; nil for a body sent as
// it is. Header keys are canonical, as in a Response.
func Codings(h http.Header) []string {
	vs := h["Content-Encoding"]
	if len(vs) == 0 {
		return nil
	}
	var out []string
	for _, v := range vs {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				out = append(out, c)
			}
		}
	}
	return out
}

// NewDecoder returns a reader of r's content with codings undone, the
// last applied first. Codings are case-insensitive (RFC 9110 §8.4.1);
// gzip and x-gzip are gzip (§8.4.1.3), deflate is the zlib format
// (§8.4.1.2), or raw deflate where the body has no zlib header, as
// browsers read it. Any other coding is a *CodingError with
// ErrUnknownCoding, returned before r is read. A decoder reads r only as
// far as it needs, so r may be a stream fed piece by piece. An error
// reading r is returned as it is, never as a *CodingError.
func NewDecoder(r io.Reader, codings []string) (io.Reader, error) {
	if len(codings) > MaxCodings {
		// Each layer holds a decompressor's window: ten thousand of
		// them cost gigabytes before a byte comes out.
		return nil, &CodingError{Coding: strings.Join(codings[:MaxCodings+1], ", ") + ", …", Err: ErrTooManyCodings}
	}
	for _, c := range codings {
		if !isGzip(c) && !strings.EqualFold(c, "deflate") {
			return nil, &CodingError{Coding: c, Err: ErrUnknownCoding}
		}
	}
	src := &sourceReader{r: r}
	r = src
	for i := len(codings) - 1; i >= 0; i-- {
		c := codings[i]
		var err error
		if isGzip(c) {
			r, err = gzip.NewReader(r)
		} else {
			r, err = newDeflate(r)
		}
		if err != nil {
			if src.err != nil {
				return nil, src.err
			}
			return nil, &CodingError{Coding: c, Err: eofUnexpected(err)}
		}
		r = &codingReader{r: r, coding: c, src: src}
	}
	return r, nil
}

// sourceReader keeps the error reading the coded bytes failed with, so
// that a decoder's error that only echoes it (a connection reset, a
// timeout, a reader's own bound) is returned as that error: the coding
// is not at fault, and whoever reads the body must tell the two apart.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

func isGzip(c string) bool { return strings.EqualFold(c, "gzip") || strings.EqualFold(c, "x-gzip") }

// newDeflate reads the deflate coding: zlib, or raw deflate when the
// first two bytes are no zlib header (RFC 1950 §2.2: method 8, a check
// value that makes them a multiple of 31).
func newDeflate(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	hdr, err := br.Peek(2)
	if err != nil && len(hdr) < 2 {
		return nil, err
	}
	if hdr[0]&0x0f == 8 && (uint16(hdr[0])<<8|uint16(hdr[1]))%31 == 0 {
		return zlib.NewReader(br)
	}
	return flate.NewReader(br), nil
}

// codingReader names the coding in its decoder's errors; an error of
// the coded bytes' own reader passes as it is (see sourceReader).
type codingReader struct {
	r      io.Reader
	coding string
	src    *sourceReader
}

func (c *codingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		var ce *CodingError
		if c.src.err != nil {
			err = c.src.err
		} else if !errors.As(err, &ce) {
			err = &CodingError{Coding: c.coding, Err: err}
		}
	}
	return n, err
}

// eofUnexpected: a body that ends before its coding's header ends is
// cut, as one that ends mid-stream is.
func eofUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// DecodeBody returns body with codings undone, at most max bytes of it.
// On an error it returns what decoded before it, and a *CodingError:
// ErrDecodedTooLarge past max (the first max bytes returned), an unknown
// coding, or a body that does not decode (io.ErrUnexpectedEOF when it
// ends early: the part that came is returned).
func DecodeBody(body []byte, codings []string, max int64) ([]byte, error) {
	if len(codings) == 0 {
		return body, nil
	}
	r, err := NewDecoder(bytes.NewReader(body), codings)
	if err != nil {
		return nil, err
	}
	// Most bodies decode to a few times their size; the buffer doubles
	// from there, never past the bound, so a bomb costs at most twice
	// the bound.
	limit := max + 1
	out := make([]byte, 0, min(limit, int64(len(body))*4+512))
	for {
		if int64(len(out)) == limit {
			return out[:max], &CodingError{Coding: strings.Join(codings, ", "), Max: max, Err: ErrDecodedTooLarge}
		}
		if len(out) == cap(out) {
			grown := make([]byte, len(out), min(limit, int64(cap(out))*2))
			copy(grown, out)
			out = grown
		}
		n, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}
