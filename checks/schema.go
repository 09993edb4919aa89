package checks

import (
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/schema"
)

// ProtocolSchemas validates replies against the checker's own protocol
// schemas, compiled once per version on first use.
func ProtocolSchemas(reg *schema.Registry) SchemaValidator { return protocolSchemas{reg} }

type protocolSchemas struct{ reg *schema.Registry }

func (p protocolSchemas) ValidateReply(version, method string, raw []byte) ([]envelope.DistilledEntry, error) {
	set, err := p.reg.Version(version)
	if err != nil {
		return nil, err
	}
	return set.ValidateReply(method, raw), nil
}

// UserSchema validates replies against a protocol schema the user gave
// (--schema FILE), whatever the version.
func UserSchema(u *schema.UserSchema) SchemaValidator { return userSchema{u} }

type userSchema struct{ u *schema.UserSchema }

func (s userSchema) ValidateReply(_, method string, raw []byte) ([]envelope.DistilledEntry, error) {
	return s.u.ValidateReply(method, raw), nil
}
