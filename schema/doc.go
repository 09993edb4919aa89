// Package schema validates MCP replies and tool schemas with JSON Schema
// (santhosh-tekuri/jsonschema/v6) and distills validation failures into
// the short, sorted, cause-level shape of [envelope.DistilledEntry].
//
// The package carries its own reply-side schemas, one per protocol version
// (protocol/*.json, embedded). They are written for what the checker
// judges, and are stricter than the official MCP schemas where the spec is
// (one of result and error, resultType values, data shapes of the
// spec-defined errors) and looser where JSON-RPC is (a null id on an error
// response). The tests compare them with the official schemas
// differentially; the official files are test data and never ship.
//
// Schemas are compiled once per process and version, lazily, inside a
// [Registry] the caller creates: the package holds no mutable state.
//
// Nothing here fetches anything: a $ref or $schema that points outside the
// document is refused with "external $ref not fetched" (T-SCHEMA-4/5).
package schema
