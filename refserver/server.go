package refserver

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"sync"
)

// Protocol versions the server speaks. 2026-07-28 is served statelessly
// (per-request _meta); the 2025 versions through an initialize handshake.
const (
	version2026    = "2026-07-28"
	version2025Nov = "2025-11-25"
	version2025Jun = "2025-06-18"
	version2025Mar = "2025-03-26"
)

// _meta keys of 2026-07-28.
const (
	keyProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	keyClientCaps      = "io.modelcontextprotocol/clientCapabilities"
	keyServerInfo      = "io.modelcontextprotocol/serverInfo"
	keyLogLevel        = "io.modelcontextprotocol/logLevel"
	keySubscriptionID  = "io.modelcontextprotocol/subscriptionId"
)

// maxSessions bounds the live 2025-xx HTTP sessions; the oldest is
// forgotten first, so clients that never DELETE cannot grow memory.
const maxSessions = 1024

// Options configure a Server.
type Options struct {
	Fault   string // "" for the clean server, else a name from Faults
	Name    string // serverInfo name; "" means "wymcp-refserver"
	Version string // serverInfo version; "" means "0.1.0"
	// Only20250326 makes a server of the older revision 2025-03-26 only,
	// as several SDKs still are: initialize always answers 2025-03-26,
	// server/discover is an unknown method, and MCP-Protocol-Version
	// (which 2025-03-26 does not have) is ignored.
	Only20250326 bool
	// StateKey is the key that integrity-protects the requestState of
	// the ask tool (T-MRTR-5); nil means 32 random bytes, drawn when the
	// server is made. Tests set it for states they can write down.
	StateKey []byte
}

// A Server is a reference MCP server: one tool ("add"), every error kept to
// the strict error-envelope contract, unless a named fault is injected. It
// serves Streamable HTTP (ServeHTTP) and stdio (ServeStdio); both may run at
// once, and ServeStdio may be called for several streams concurrently.
type Server struct {
	fault, name, version string
	only0326             bool
	stateKey             []byte // the ask tool's HMAC key (see Options.StateKey)

	done      chan struct{} // closed by Close: releases requests held by the hang fault
	closeOnce sync.Once

	mu       sync.Mutex
	sessions map[string]string // 2025-xx HTTP session id → negotiated version
	order    []string          // session ids by creation, for eviction; may hold ended ids
}

// New returns a server configured by opts. An unknown fault name is an
// error wrapping ErrUnknownFault.
func New(opts Options) (*Server, error) {
	if err := checkFault(opts.Fault); err != nil {
		return nil, fmt.Errorf("refserver: %w", err)
	}
	s := &Server{
		fault:    opts.Fault,
		only0326: opts.Only20250326,
		name:     opts.Name,
		version:  opts.Version,
		done:     make(chan struct{}),
		sessions: map[string]string{},
	}
	s.stateKey = bytes.Clone(opts.StateKey)
	if s.stateKey == nil {
		s.stateKey = make([]byte, 32)
		rand.Read(s.stateKey) // (crypto/rand: never fails)
	}
	if s.name == "" {
		s.name = "wymcp-refserver"
	}
	if s.version == "" {
		s.version = "0.1.0"
	}
	return s, nil
}

// Close releases every HTTP request held by the hang fault (their
// connections are dropped without a response) and makes later ones drop at
// once. It does not stop ServeHTTP or ServeStdio from serving. It always
// returns nil.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { close(s.done) })
	return nil
}

// newSession starts a 2025-xx HTTP session and returns its id: 128 random
// bits as 26 base32 characters, all visible ASCII (T-SESS-1).
func (s *Server) newSession(version string) string {
	id := rand.Text()
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.sessions) >= maxSessions {
		oldest := s.order[0]
		s.order = s.order[1:]
		delete(s.sessions, oldest)
	}
	if len(s.order) > 2*maxSessions { // drop ids of sessions ended by DELETE
		live := s.order[:0]
		for _, o := range s.order {
			if _, ok := s.sessions[o]; ok {
				live = append(live, o)
			}
		}
		s.order = live
	}
	s.sessions[id] = version
	s.order = append(s.order, id)
	return id
}

func (s *Server) session(id string) (version string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	version, ok = s.sessions[id]
	return version, ok
}

// endSession ends a session and reports whether it was live. Under the
// ended-session-served fault the session is reported ended but kept.
func (s *Server) endSession(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[id]
	if ok && s.fault != faultEndedSession {
		delete(s.sessions, id)
	}
	return ok
}

func (s *Server) serverInfo() map[string]any {
	return map[string]any{"name": s.name, "version": s.version}
}
