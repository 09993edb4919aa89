package runner

import (
	"hash/fnv"
	"math"
	"regexp"
	"strconv"
	"sync"

	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/fixtures"
)

// A requester must not use an id twice in a session (T-RPC-4), and the
// checker is a requester. A server that keys its bookkeeping by id may
// refuse a reused one, or still hold it a moment after answering; the
// fixture would then be judged on a reply to the checker's own fault.
//
// So each fixture gets a block of ids, one per exchange it may make
// ({{id}} in its body). Where a block stands follows from the fixture's
// ID, not from when the fixture runs or which others run: a concurrent
// run sends the ids a run in sequence sends, a run of one fixture (--run)
// the ids the whole corpus run sent, and reports stay byte-identical.
// The runner's own requests (handshake, probes, restarts) count up from
// 1 and step over the fixtures' blocks, so no two requests of a run share
// an id.

// idStrideMin is the least width of a block: blocks start at round
// numbers, so a reader tells a fixture's ids from the runner's own.
const idStrideMin = 1000

// idStrideMax bounds the width of a block, leaving room for 2,146
// blocks below 2^31; a fixture making more exchanges than that (one per
// tool of a server listing a million) repeats ids.
const idStrideMax = 1_000_000

// idBlocks holds where each fixture's block starts. Shared by the run and
// its siblings (a staged fixture's process), which send their fixture's
// ids.
type idBlocks struct {
	mu     sync.Mutex
	stride int
	start  map[*fixtures.Fixture]int
	taken  map[int]bool // blocks by number: start / stride
}

// literalID finds an "id" member written as an integer in a fixture's
// body template. It reads text, not JSON: a template need not parse
// before it is expanded, and a tool argument named "id" that is taken
// for a request id only costs the runner one id it does not use.
// A number in another spelling (7.0, 70e-1) is the integer a server
// that reads it as a number echoes (review rev35).
var literalID = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]{1,10}(?:\.[0-9]{1,20})?(?:[eE][-+]?[0-9]{1,3})?)\s*[,}\]]`)

// literalIDs are the positive integer ids f writes as numbers.
func literalIDs(f *fixtures.Fixture) []int {
	var ids []int
	for _, m := range literalID.FindAllSubmatch(f.Body, -1) {
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err == nil && v > 0 && v <= math.MaxInt32 && v == math.Trunc(v) {
			ids = append(ids, int(v))
		}
	}
	return ids
}

// literalSet is the set of literal ids the fixtures write: known before
// the negotiation, so even the runner's first request steps over them,
// wherever the blocks (whose width the tools listed set) come to stand.
func literalSet(fx []*fixtures.Fixture) map[int]bool {
	set := map[int]bool{}
	for _, f := range fx {
		for _, id := range literalIDs(f) {
			set[id] = true
		}
	}
	return set
}

// reserve gives each fixture that has none a block of ids, in order:
// the block its ID hashes to, or the next free one after it.
func (r *run) reserve(fx ...*fixtures.Fixture) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.blocks == nil {
		r.blocks = &idBlocks{stride: r.idStride(), start: map[*fixtures.Fixture]int{}, taken: map[int]bool{}}
	}
	b := r.blocks
	b.mu.Lock()
	defer b.mu.Unlock()
	// Ids stay below 2^31: some servers read an id into an int32.
	blocks := math.MaxInt32/b.stride - 1
	// A literal id inside a block would be sent beside that block's
	// fixture: the block is then no fixture's. (One below the blocks is
	// no id of the runner's own: see literalSet.)
	for _, f := range fx {
		for _, id := range literalIDs(f) {
			if id >= b.stride {
				b.taken[id/b.stride] = true
			}
		}
	}
	for _, f := range fx {
		if _, ok := b.start[f]; ok {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(f.ID))
		n := 1 + int(h.Sum32()%uint32(blocks))
		// A block the runner's own ids have reached is theirs. With
		// more fixtures than blocks (a server listing millions of
		// tools), ids repeat rather than the search go on for ever.
		for tries := 0; (b.taken[n] || n <= r.sess.nextID/b.stride) && tries < blocks; tries++ {
			n = n%blocks + 1
		}
		b.taken[n] = true
		b.start[f] = n * b.stride
	}
}

// idStride is the width of a block: more than the exchanges any fixture
// makes (one per tool at most, or maxViolations), rounded up to a power
// of ten.
func (r *run) idStride() int {
	n := maxViolations
	if r.facts != nil {
		n = max(n, len(r.facts.Tools))
	}
	s := idStrideMin
	for s <= n && s < idStrideMax {
		s *= 10
	}
	return s
}

// requestID is the id the i-th exchange of f sends for {{id}}.
func (r *run) requestID(f *fixtures.Fixture, i int) int {
	r.reserve(f)
	r.blocks.mu.Lock()
	defer r.blocks.mu.Unlock()
	return r.blocks.start[f] + i
}

// id is the next id of the runner's own requests.
func (r *run) id() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.blocks
	if b != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
	}
	for r.sess.nextID++; ; {
		switch n := r.sess.nextID; {
		case r.literal[n]:
			r.sess.nextID++
		case b != nil && b.taken[n/b.stride]:
			r.sess.nextID += b.stride - n%b.stride
		default:
			return n
		}
	}
}

// maxOwn bounds the marker and probe ids a run remembers as its own.
const maxOwn = 16384

// ownID is the id of a marker or a liveness probe: the next of the
// runner's own, remembered so that its reply, however late, is known for
// no fixture's.
func (r *run) ownID() int {
	id := r.id()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.own == nil || len(r.own) >= maxOwn {
		r.own = map[string]bool{}
	}
	r.own[envelope.IntIDKey(id)] = true
	return id
}

// stageID is the id of the initialize that opens a staged fixture's own
// session: the last of its block, which no exchange of the fixture
// reaches. Drawn from the run's counter it would depend on how many
// restarts came before, and it is reported.
func (r *run) stageID(f *fixtures.Fixture) int {
	r.reserve(f)
	r.blocks.mu.Lock()
	defer r.blocks.mu.Unlock()
	return r.blocks.start[f] + r.blocks.stride - 1
}

// blockWidth is the width of f's block of ids.
func (r *run) blockWidth(f *fixtures.Fixture) int {
	r.reserve(f)
	r.blocks.mu.Lock()
	defer r.blocks.mu.Unlock()
	return r.blocks.stride
}
