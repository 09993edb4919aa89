package checks

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/wymcp/wymcp-check/envelope"
)

var ClientAcceptHeaders = &Check{
	ID:       "CLI1010",
	Title:    "An HTTP client accepts both reply types and sends JSON",
	SpecRef:  "T-HTTP-2, T-HTTP-6, T-HTTP-12, AMB-17",
	Severity: MUST,
	Area:     AreaClient,
	Doc: `A client POST sends Accept listing both application/json and
text/event-stream, the two forms a reply may take (T-HTTP-2, a client
MUST); in 2025-06-18 and 2025-11-25 a GET that opens the server's stream
lists text/event-stream (T-HTTP-12). A type left out, or refused with q=0,
fails; one accepted only through a wildcard (*/*, text/*) warns, as the
spec asks for the types to be listed. The request's Content-Type is not
regulated (T-HTTP-6, AMB-17), so a POST body sent as anything but
application/json warns: servers commonly refuse it with 415.`,
	Run: func(p *Pass) error {
		cp, err := needClient(p)
		if err != nil {
			return err
		}
		m := cp.in.Message
		if m.Transport != envelope.HTTP {
			return skipNotHTTP
		}
		var want []string
		switch m.HTTPMethod {
		case http.MethodPost, "":
			want = []string{"application/json", "text/event-stream"}
		case http.MethodGet:
			if !cp.legacy() {
				return Skip("2026-07-28 has no GET stream")
			}
			want = []string{"text/event-stream"}
		default:
			return Skipf("an HTTP %s has no reply body to negotiate", m.HTTPMethod)
		}
		accept := headerValues(m.Header, "Accept")
		for _, w := range want {
			switch acceptance(accept, w) {
			case acceptRefused:
				if len(accept) == 0 {
					p.Failf("http.header.accept", "Accept is missing; the client lists %s (T-HTTP-2, T-HTTP-12)", strings.Join(want, " and "))
					return nil
				}
				p.Failf("http.header.accept", "Accept does not list %s (T-HTTP-2, T-HTTP-12)", w)
			case acceptWildcard:
				p.Warnf("http.header.accept", "Accept takes %s only through a wildcard; the spec asks for it to be listed (T-HTTP-2)", w)
			}
		}
		if m.HTTPMethod == http.MethodPost || m.HTTPMethod == "" {
			ct, ok := envelope.HeaderValue(m.Header, "Content-Type")
			all := envelope.HeaderValues(m.Header, "Content-Type")
			switch {
			case len(all) > 1:
				// A singleton field (RFC 9110 §5.3: no sender generates
				// it twice); a server reads either line, or refuses it
				// with 415 (server-everything does; review rev23).
				p.Warnf("http.header.content-type", "Content-Type is sent %d times (%s); it is a single field, and servers commonly refuse such a POST with 415 (T-HTTP-6, AMB-17)", len(all), Quote(strings.Join(all, ", "), quoteN))
			case !ok && len(m.Body) > 0:
				p.Warnf("http.header.content-type", "the POST has no Content-Type; servers commonly refuse that with 415 (T-HTTP-6, AMB-17)")
			case ok && envelope.MediaType(ct) != "application/json":
				p.Warnf("http.header.content-type", "Content-Type is %s, not application/json; servers commonly refuse that with 415 (T-HTTP-6, AMB-17)", Quote(ct, quoteN))
			}
		}
		return nil
	},
}

// headerValues are every value of a header, whatever the case of its
// name, each comma-separated element on its own (a comma inside a quoted
// parameter value separates nothing, RFC 9110 §5.6.4).
func headerValues(h http.Header, name string) []string {
	var out []string
	for _, v := range envelope.HeaderValues(h, name) {
		start, quoted := 0, false
		for i := 0; i <= len(v); i++ {
			switch {
			case i < len(v) && quoted && v[i] == '\\':
				i++
			case i < len(v) && v[i] == '"':
				quoted = !quoted
			case i == len(v) || v[i] == ',' && !quoted:
				if e := strings.TrimSpace(v[start:min(i, len(v))]); e != "" {
					out = append(out, e)
				}
				start = i + 1
			}
		}
	}
	return out
}

type accepted uint8

const (
	acceptRefused accepted = iota
	acceptWildcard
	acceptListed
)

// acceptance reads how an Accept header takes a media type (RFC 9110
// §12.5.1): listed by name, taken through a wildcard, or not at all (also
// when q=0 refuses it).
func acceptance(elems []string, want string) accepted {
	wantType, _, _ := strings.Cut(want, "/")
	best := acceptRefused
	for _, e := range elems {
		// Read with RFC 9110's latitude (an empty parameter, odd case),
		// which mime.ParseMediaType refuses.
		mt := envelope.MediaType(e)
		if q, ok := mediaParam(e, "q"); ok {
			if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
				if mt == want {
					return acceptRefused
				}
				continue
			}
		}
		switch {
		case mt == want:
			best = acceptListed
		case (mt == "*/*" || mt == wantType+"/*") && best == acceptRefused:
			best = acceptWildcard
		}
	}
	return best
}

// mediaParam is the value of a media-type element's parameter (name
// case-insensitive, quotes removed); empty parameters are skipped.
func mediaParam(e, name string) (string, bool) {
	_, rest, _ := strings.Cut(e, ";")
	for _, p := range strings.Split(rest, ";") {
		k, v, ok := strings.Cut(p, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.Trim(strings.TrimSpace(v), `"`), true
		}
	}
	return "", false
}
