package refserver

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// ServeHTTP serves the Streamable HTTP transport on any path.
//
// A request is routed by what it carries: initialize starts a 2025-xx
// session (Mcp-Session-Id); a body whose params._meta names a protocol
// version is 2026-07-28 (any Mcp-Session-Id is ignored, T-HTTP-18); other
// requests with Mcp-Session-Id belong to that session; the rest are
// 2026-07-28 requests missing their _meta.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// DNS-rebinding defence (T-HTTP-14): a browser Origin must be this host
	// or a loopback one; non-browser clients send none.
	if o := r.Header.Get("Origin"); o != "" && !allowedOrigin(o, r.Host) && s.fault != faultOriginUnchecked {
		s.writeError(w, &rpcError{code: codeInvalidRequest, message: "origin not allowed", status: http.StatusForbidden})
		return
	}
	// The same attack through a rebound name: a server on a loopback
	// address answers only to loopback names.
	if !allowedHost(r) && s.fault != faultHostUnchecked {
		s.writeError(w, &rpcError{code: codeInvalidRequest, message: "host not allowed", status: http.StatusForbidden})
		return
	}
	if s.fault == faultLargeHeader && headerBytes(r.Header) > 32<<10 {
		s.writeError(w, &rpcError{code: codeInternal, message: "internal error", status: http.StatusInternalServerError})
		return
	}
	switch r.Method {
	case http.MethodPost:
		if s.fault == faultAcceptStrict && !acceptsBoth(r) {
			s.writeError(w, &rpcError{code: codeInvalidRequest, message: "accept must list application/json and text/event-stream", status: http.StatusNotAcceptable})
			return
		}
		s.servePost(w, r)
	case http.MethodDelete:
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			s.serveDelete(w, id)
			return
		}
		s.methodNotAllowed(w, r)
	default:
		// No GET stream: 2026-07-28 has none (T-HTTP-13) and 2025-xx may
		// refuse it (T-HTTP-12).
		s.methodNotAllowed(w, r)
	}
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", http.MethodPost)
	s.writeError(w, &rpcError{
		code:    codeInvalidRequest,
		message: `http method "` + s.quote(r.Method) + `" is not allowed; use POST`,
		status:  http.StatusMethodNotAllowed,
	})
}

// serveDelete ends a 2025-xx session (T-SESS-4); later use gets 404.
func (s *Server) serveDelete(w http.ResponseWriter, id string) {
	if !s.endSession(id) {
		s.writeError(w, unknownSession())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func unknownSession() *rpcError {
	return &rpcError{code: codeInvalidRequest, message: "unknown or ended session", status: http.StatusNotFound}
}

func (s *Server) servePost(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxMessage+1))
	if err != nil {
		return // the client went away mid-body; nobody is left to answer
	}
	if len(body) > maxMessage {
		s.writeError(w, &rpcError{
			code:    codeInvalidRequest,
			message: "message exceeds " + strconv.Itoa(maxMessage) + " bytes",
			status:  http.StatusRequestEntityTooLarge,
		})
		return
	}
	m, perr := s.parse(body)
	if perr != nil {
		if s.fault == faultTextPlainError && perr.code == codeParse {
			http.Error(w, perr.message, http.StatusBadRequest)
			return
		}
		s.writeJSON(w, perr.status, s.errorBody(m, perr))
		return
	}
	s.writeReply(w, r, s.route(m, r.Header))
}

func (s *Server) route(m *message, h http.Header) reply {
	sid := h.Get("Mcp-Session-Id")
	switch {
	case m.method == "initialize" && sid != "":
		if _, live := s.session(sid); live {
			return s.initializeAgain(m)
		}
		rep, version := s.initialize(m)
		if version != "" {
			rep.sessionID = s.newSession(version)
		}
		return rep
	case m.method == "initialize":
		rep, version := s.initialize(m)
		if version != "" {
			rep.sessionID = s.newSession(version)
		}
		return rep
	case member(member(m.params, "_meta"), keyProtocolVersion).Exists():
		return s.serveModern(m, h)
	case sid == "" && legacyHeader(h) != "":
		// A 2025-xx request outside any session (T-SESS-2).
		e := invalidRequest("missing Mcp-Session-Id header")
		if s.fault == faultSessionless {
			e.status = http.StatusNotFound
		}
		return s.fail(m, e)
	case sid == "":
		return s.serveModern(m, h)
	}
	version, ok := s.session(sid)
	if !ok && s.fault == faultEndedSession {
		version, ok = version2025Nov, true
	}
	if !ok {
		return s.fail(m, unknownSession()) // T-SESS-3
	}
	// The header is optional in a session: the session knows its version.
	// Present, it must name that version (T-HTTP-7).
	if vals := h.Values("Mcp-Protocol-Version"); len(vals) > 0 && vals[0] != version && version != version2025Mar {
		got := vals[0]
		return s.fail(m, &rpcError{
			code:    codeInvalidRequest,
			message: "header MCP-Protocol-Version does not match the session version",
			data:    map[string]any{"header": "MCP-Protocol-Version", "expected": version, "received": s.quote(got)},
			status:  http.StatusBadRequest,
		})
	}
	rep := s.serveLegacy(m, version)
	rep.progress = nil // 2025-xx answers with JSON; progress travels only on stdio
	return rep
}

func (s *Server) writeReply(w http.ResponseWriter, r *http.Request, rep reply) {
	switch {
	case rep.hang:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		panic(http.ErrAbortHandler) // drop the connection, answer nothing
	case rep.crash:
		panic(http.ErrAbortHandler)
	case rep.listen != nil:
		s.serveListen(w, r, rep.listen)
		return
	case rep.body == nil:
		w.WriteHeader(http.StatusAccepted) // T-HTTP-4
		return
	}
	if rep.sessionID != "" {
		w.Header().Set("Mcp-Session-Id", rep.sessionID)
	}
	if (rep.progress != nil || rep.log != nil) && acceptsEventStream(r) {
		// T-HTTP-17: related notifications, then the response, then the
		// end of the stream; no proxy buffering.
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Accel-Buffering", "no")
		w.WriteHeader(rep.status)
		for _, event := range s.inOrder(rep) {
			if event == nil {
				continue
			}
			_, _ = w.Write([]byte("event: message\ndata: " + string(event) + "\n\n"))
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		return
	}
	s.writeJSON(w, rep.status, rep.body)
}

// writeError writes an error that no readable request id goes with.
func (s *Server) writeError(w http.ResponseWriter, e *rpcError) {
	s.writeJSON(w, e.status, s.errorBody(nil, e))
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // a failed write means the client left
}

// acceptsBoth: Accept lists both media types a client must accept.
func acceptsBoth(r *http.Request) bool {
	json := false
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			json = json || strings.EqualFold(strings.TrimSpace(mt), "application/json")
		}
	}
	return json && acceptsEventStream(r)
}

func acceptsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
				return true
			}
		}
	}
	return false
}

// allowedOrigin accepts an Origin naming a loopback host or the host the
// request was sent to.
func allowedOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	name := u.Hostname()
	if strings.EqualFold(name, "localhost") {
		return true
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return true
	}
	reqHost := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		reqHost = h
	}
	return strings.EqualFold(name, strings.Trim(reqHost, "[]"))
}

// serveListen holds a subscriptions/listen stream open: the
// acknowledgment first (T-SUB-1), then nothing until the client closes
// the stream (it cancels the subscription, T-HTTP-20) or the server shuts
// down, when the closing result ends it (T-SUB-4).
func (s *Server) serveListen(w http.ResponseWriter, r *http.Request, sub *subscription) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(event []byte) {
		_, _ = w.Write([]byte("event: message\ndata: " + string(event) + "\n\n"))
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	write(sub.ack)
	select {
	case <-r.Context().Done():
	case <-s.done:
		write(sub.closing)
	}
}

// legacyHeader is the 2025-xx version a request's MCP-Protocol-Version
// names, or "".
func legacyHeader(h http.Header) string {
	switch v := h.Get("Mcp-Protocol-Version"); v {
	case version2025Nov, version2025Jun:
		return v
	}
	return ""
}

// allowedHost reports whether the request may be served by the Host it
// names: on a loopback address only loopback names are (a foreign name
// is a DNS-rebinding page talking to a local server).
func allowedHost(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true
	}
	ta, ok := local.(*net.TCPAddr)
	if !ok || !ta.IP.IsLoopback() {
		return true
	}
	name := r.Host
	if h, _, err := net.SplitHostPort(name); err == nil {
		name = h
	}
	name = strings.Trim(name, "[]")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// headerBytes approximates the size of a request's header block.
func headerBytes(h http.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}
