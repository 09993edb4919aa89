// Package schema validates MCP replies and tool schemas with JSON Schema
// (santhosh-tekuri/jsonschema/v6) and distills validation failures into
// the short, sorted, cause-level shape of [envelope.DistilledEntry].
//
// The package carries its own reply-side schemas, one per protocol version
// (protocol/*.json, embedded, all written in 2020-12). They are written for
// what the checker judges, and are stricter than the official MCP schemas
// where the spec is (one of result and error, resultType values, data
// shapes of the spec-defined errors) and looser where JSON-RPC is (a null
// id on an error response). These conventions hold in those files:
//
//   - x-wymcp-replies maps each method to the $defs type of its whole
//     reply; a method not listed gets the envelope and the generic result.
//   - x-wymcp-task-replies maps a method to the $defs type of the reply
//     to a task-augmented request of it (params.task, 2025-11-25), which
//     the caller names with [TaskAugmented]; a method not listed there is
//     answered as if the request carried no task.
//   - x-wymcp-server-messages maps the method of each notification and
//     request a server sends besides its response (progress, log,
//     list-change notifications; sampling, elicitation and roots requests
//     before 2026-07-28, and 2025-11-25's tasks/* requests) to the $defs
//     type of the whole message; only the messages the version defines
//     are listed, and a method not listed is not validated
//     ([Set.ValidateServerMessage]).
//   - A $defs name that starts with an upper-case letter claims to cover
//     the official type of that name ([Set.Covers]); lower-case names are
//     helpers.
//
// The tests compare the schemas with the official ones differentially, on
// the official examples and systematic mutations of them; the official
// files are test data found through WYMCP_MCP_SCHEMA_DIR and never ship.
//
// Schemas are compiled once per process and version, lazily, inside a
// [Registry] the caller creates: the package holds no mutable state.
//
// Nothing here fetches anything: a $ref or $schema that points outside the
// document is refused with [ErrExternalRef] (T-SCHEMA-4, T-SCHEMA-5).
package schema
