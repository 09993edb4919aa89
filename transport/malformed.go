package transport

import (
	"strings"
	"unicode/utf8"
)

// malformedCauses are what net/http says of a reply whose start line,
// header section or chunked framing breaks HTTP/1.1's message syntax
// (RFC 9112 §4, §5, §6, §7.1; RFC 9110 §5.5, §8.6): a status that is no
// three digits, a header line without a colon or with a control
// character in its value, a Content-Length that is no number or differs
// from another, a chunk whose size or line ends break the grammar. A
// sender MUST NOT generate such elements (RFC 9110 §2.2), and no client
// can read the message. net/http's errors have no exported types, so
// the causes are its words; TestMalformedHTTP and TestMalformedChunks
// pin them against the Go in use. Its own limits (a header section past
// MaxResponseHeaderBytes) and readings RFC 9112 leaves to a recipient
// are not among them.
var malformedCauses = []string{
	"malformed HTTP status code",
	"malformed HTTP response",
	"malformed HTTP version",
	"malformed MIME header",
	"bad Content-Length",
	"message cannot contain multiple Content-Length headers",
	// A chunked body's framing (RFC 9112 §7.1): a chunk size that is no
	// hex number, a line that ends in no CRLF, data that runs past its
	// size. (Its limits, a chunk line or extensions past their bound and
	// a size past int64, are net/http's own and not among them.)
	"invalid byte in chunk length",
	"empty hex number for chunk length",
	"malformed chunked encoding",
	"chunked line ends with bare LF",
	"invalid CR in chunked line",
}

// maxCause bounds the cause kept: it quotes the server's own bytes.
const maxCause = 200

// MalformedHTTP is net/http's cause when err says the reply was no
// HTTP/1.1 message, "" for any other error: the server's finding
// (HTTP1006), for the transport and for the relay alike.
func MalformedHTTP(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	at := -1
	for _, c := range malformedCauses {
		if i := strings.Index(msg, c); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return ""
	}
	cause := msg[at:]
	if len(cause) > maxCause {
		cut := maxCause
		for cut > 0 && !utf8.RuneStart(cause[cut]) {
			cut--
		}
		cause = cause[:cut] + "…"
	}
	return cause
}
