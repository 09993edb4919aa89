package envelope

import "slices"

// Protocol versions the checker knows, newest first.
const (
	V20260728 = "2026-07-28"
	V20251125 = "2025-11-25"
	V20250618 = "2025-06-18"
	// V20250326 is the older revision some servers still speak only: such
	// a server is judged under 2025-06-18's rules where 2025-03-26 does
	// not differ (digest §1a), so it is not among Versions.
	V20250326 = "2025-03-26"
)

// Versions lists the protocol versions the checker judges, newest first.
func Versions() []string { return []string{V20260728, V20251125, V20250618} }

// KnownVersion reports whether v is one of Versions.
func KnownVersion(v string) bool { return slices.Contains(Versions(), v) }

// Standard JSON-RPC 2.0 codes (JSON-RPC §5.1) and the MCP-defined ones.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeResourceNotFound = -32002 // 2025-xx only; forbidden in 2026-07-28
	CodeURLElicitation   = -32042 // 2025-11-25 only; forbidden in 2026-07-28
	CodeHeaderMismatch   = -32020 // 2026-07-28
	CodeMissingClientCap = -32021 // 2026-07-28
	CodeUnsupportedVer   = -32022 // 2026-07-28
)

// A CodeRule is one row of a version's error-code table.
type CodeRule struct {
	Code    int
	Name    string // the table's generic message, e.g. "Method not found"
	Use     string // the condition the code is for
	Ref     string // where the rule comes from
	DataKey string // a data key the spec defines for this error, if any
}

// CodeClass is how a version's table classifies a code.
type CodeClass int

const (
	CodeDefined     CodeClass = iota // in the table
	CodeLegacy                       // -32000..-32019: implementation-defined, SHOULD NOT (warn)
	CodeForbidden                    // MUST NOT for this version
	CodeReserved                     // -32768..-32100 outside the table: reserved by JSON-RPC (T-ERR-11)
	CodeServerRange                  // 2025-xx -32020..-32099: JSON-RPC's implementation-defined range
	CodeUnlisted                     // not in the table; allowed only where the contract allows app codes
)

var jsonrpcCodes = []CodeRule{
	{CodeParseError, "Parse error", "bytes that are not valid JSON", "JSON-RPC §5.1; digest T-ERR-1", ""},
	{CodeInvalidRequest, "Invalid Request", "valid JSON that is not a valid request object", "JSON-RPC §5.1; digest T-ERR-2", ""},
	{CodeMethodNotFound, "Method not found", "a method the server does not implement or advertise", "JSON-RPC §5.1; digest T-ERR-3", ""},
	{CodeInvalidParams, "Invalid params", "parameters that fail validation", "JSON-RPC §5.1; digest T-ERR-4", ""},
	{CodeInternalError, "Internal error", "an unexpected failure inside the server", "JSON-RPC §5.1; digest T-ERR-5", ""},
}

// The tables are built once and shared; nothing writes to them after
// initialisation.
var (
	table20260728 = buildTable(V20260728)
	table20251125 = buildTable(V20251125)
	table20250618 = buildTable(V20250618)
)

// CodeTable returns the error-code table of a protocol version (digest
// §3.3). An unknown version gets the 2025-11-25 table, the widest of the
// handshake era. The result is shared: do not modify it.
func CodeTable(version string) []CodeRule {
	switch version {
	case V20260728:
		return table20260728
	case V20250618:
		return table20250618
	}
	return table20251125
}

func buildTable(version string) []CodeRule {
	t := slices.Clone(jsonrpcCodes)
	switch version {
	case V20260728:
		t = append(t,
			CodeRule{CodeHeaderMismatch, "Header mismatch", "HTTP headers missing, malformed or disagreeing with the body", "2026-07-28 basic/index § Error Codes; digest T-ERR-12", ""},
			CodeRule{CodeMissingClientCap, "Missing required client capability", "serving the request needs a client capability not declared", "2026-07-28 basic/index § _meta; digest T-ERR-13", "requiredCapabilities"},
			CodeRule{CodeUnsupportedVer, "Unsupported protocol version", "the request's protocol version is not served", "2026-07-28 basic/versioning; digest T-ERR-14", ""},
		)
	case V20250618:
		t = append(t, CodeRule{CodeResourceNotFound, "Resource not found", "resources/read of a missing resource (SHOULD)", "2025-06-18 server/resources § Error Handling; digest T-ERR-6", ""})
	default:
		t = append(t,
			CodeRule{CodeResourceNotFound, "Resource not found", "resources/read of a missing resource (SHOULD)", "2025-11-25 server/resources § Error Handling; digest T-ERR-6", ""},
			CodeRule{CodeURLElicitation, "URL elicitation required", "a URL-mode elicitation must finish first", "2025-11-25 client/elicitation; digest T-ERR-7", "elicitations"},
		)
	}
	return t
}

// ClassifyCode places code in the version's table; extra rows (a user
// contract's additions) count as defined.
func ClassifyCode(version string, code int, extra []CodeRule) (CodeClass, *CodeRule) {
	table := CodeTable(version)
	for i := range table {
		if table[i].Code == code {
			return CodeDefined, &table[i]
		}
	}
	// What a version forbids stays forbidden whatever a contract adds.
	switch {
	case version == V20260728 && (code == CodeResourceNotFound || code == CodeURLElicitation):
		return CodeForbidden, nil // T-ERR-10
	case version == V20260728 && code >= -32099 && code <= -32020:
		return CodeForbidden, nil // T-ERR-8
	case code >= -32768 && code <= -32100:
		return CodeReserved, nil // reserved by JSON-RPC §5.1 for pre-defined errors
	case version == V20260728 && code >= -32019 && code <= -32000:
		// T-ERR-9 is the spec's SHOULD NOT: a contract that names the
		// code gives it a meaning for its own users, not for receivers.
		return CodeLegacy, nil
	}
	for i := range extra {
		if extra[i].Code == code {
			return CodeDefined, &extra[i]
		}
	}
	switch {
	case code >= -32019 && code <= -32000:
		return CodeLegacy, nil // T-ERR-9
	case code >= -32099 && code <= -32020:
		return CodeServerRange, nil // 2025-xx: JSON-RPC's "server error" range
	}
	return CodeUnlisted, nil
}
