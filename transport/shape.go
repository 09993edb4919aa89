package transport

import (
	"github.com/tidwall/gjson"
	"github.com/wymcp/wymcp-check/envelope"
)

// isResponse reports whether msg ends an exchange: a JSON object with no
// "method" member (a result or an error, whatever its id says), or a JSON
// array (a batch reply, which the checks then judge). A request or a
// notification does not, nor does anything that is not JSON, nor a bare
// JSON scalar: none of those is an answer, and the server may still send
// one.
func isResponse(msg []byte) bool {
	if envelope.TooDeep(msg) || !gjson.ValidBytes(msg) {
		return false
	}
	r := gjson.ParseBytes(msg)
	switch {
	case r.IsObject():
		return !r.Get("method").Exists()
	case r.IsArray():
		return true
	}
	return false
}
