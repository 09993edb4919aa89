package proxy

import (
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/wymcp/wymcp-check/envelope"
)

// Redacted replaces a secret wherever the relay shows or records it.
const Redacted = "<redacted>"

// credentialHeaders carry credentials in any request or reply.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// maxSecrets bounds the distinct values kept: a client that sends a
// new token with every request must not grow the relay's memory.
const maxSecrets = 64

// A Redactor knows the secrets seen so far: the values of the headers
// the user adds, and of the credential headers that pass. It is safe
// for concurrent use.
type Redactor struct {
	mu      sync.Mutex
	names   []string // extra header names to redact, canonical
	secrets []envelope.Secret
}

// NewRedactor redacts the credential headers and the headers in extra,
// whose values are secrets from the start.
func NewRedactor(extra http.Header) *Redactor {
	r := &Redactor{}
	for k, vs := range extra {
		r.names = append(r.names, http.CanonicalHeaderKey(k))
		for _, v := range vs {
			r.learn(k, v)
		}
	}
	return r
}

func (r *Redactor) secret(name string) bool {
	name = http.CanonicalHeaderKey(name)
	return slices.Contains(credentialHeaders, name) || slices.Contains(r.names, name)
}

// Header returns a copy of h with secret values replaced by Redacted,
// and learns those values for Scrub.
func (r *Redactor) Header(h http.Header) http.Header {
	out := make(http.Header, len(h))
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, vs := range h {
		if !r.secret(k) {
			out[k] = slices.Clone(vs)
			continue
		}
		red := make([]string, len(vs))
		for i, v := range vs {
			r.learn(k, v)
			red[i] = Redacted
		}
		out[k] = red
	}
	return out
}

// learn keeps a value, and the token of an "Authorization: Scheme
// token" value, which a server may echo alone.
func (r *Redactor) learn(name, v string) {
	add := func(v string) {
		if !envelope.MayBeCredential(v) || len(r.secrets) >= maxSecrets || slices.ContainsFunc(r.secrets, func(s envelope.Secret) bool { return s.Value == v }) {
			return
		}
		r.secrets = append(r.secrets, envelope.Secret{Name: http.CanonicalHeaderKey(name), Value: v})
	}
	add(v)
	if _, tok, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
		add(strings.TrimSpace(tok))
	}
}

// Learn takes v for a secret of the name given (a value of the upstream
// URL's query, say, which the relay adds to every request it forwards):
// scrubbed wherever it comes back, as a header's is.
func (r *Redactor) Learn(name, v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.learn(name, v)
}

// Secrets returns the secrets learned so far.
func (r *Redactor) Secrets() []envelope.Secret {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.secrets)
}

// Scrub returns b with every known secret value replaced by its marker
// (envelope.SecretMarker); b itself when it holds none.
func (r *Redactor) Scrub(b []byte) []byte {
	b, _ = envelope.ScrubSecrets(b, r.Secrets())
	return b
}
