package proxy

import (
	"sync"
	"time"
)

// Queue bounds: far more than a person can read, small enough that an
// Observer stuck on a blocked terminal costs a bounded amount of memory.
const (
	queueItems = 4096
	queueBytes = 64 << 20
)

// An event is one delivery to the Observer.
type event struct {
	obs  *Observation
	pair *Pair
	size int64
}

// A queue hands events to an Observer on its own goroutine. put never
// blocks: when the queue is full the event is dropped and counted, so
// the relay's forwarding never waits for the Observer.
type queue struct {
	o Observer

	mu      sync.Mutex
	items   []event
	bytes   int64
	closed  bool
	stats   Stats
	wake    chan struct{}
	drained chan struct{}
}

func newQueue(o Observer) *queue {
	q := &queue{o: o, wake: make(chan struct{}, 1), drained: make(chan struct{})}
	go q.run()
	return q
}

// put queues the events of one passage (a message, and the pair it
// completes) as a unit: either all are queued or all are dropped, so the
// Observer never sees a Completes message without its Pair.
func (q *queue) put(evs ...event) {
	var size int64
	for _, e := range evs {
		size += e.size
	}
	q.mu.Lock()
	for _, e := range evs {
		if e.obs != nil {
			q.stats.Messages[e.obs.Dir]++
			q.stats.Bytes[e.obs.Dir] += e.obs.Size
		}
		if e.pair != nil {
			q.stats.Pairs++
			if e.pair.ReplySeq == 0 && e.pair.Exchange.Failure != "" {
				q.stats.Unanswered++
			}
		}
	}
	if q.closed || len(q.items)+len(evs) > queueItems || q.bytes+size > queueBytes {
		for _, e := range evs {
			if e.obs != nil {
				q.stats.DroppedMessages++
			} else {
				q.stats.DroppedPairs++
			}
		}
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, evs...)
	q.bytes += size
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue) run() {
	defer close(q.drained)
	for {
		q.mu.Lock()
		items := q.items
		q.items = nil
		q.bytes = 0
		closed := q.closed
		q.mu.Unlock()
		for _, e := range items {
			if e.obs != nil {
				q.o.Message(*e.obs)
			} else {
				q.o.Exchange(*e.pair)
			}
		}
		if len(items) > 0 {
			continue
		}
		if closed {
			return
		}
		<-q.wake
	}
}

// close stops taking events and waits up to wait for the Observer to
// receive those queued. It reports whether it finished in time; an
// Observer still busy then is left to finish (or not) on its own.
func (q *queue) close(wait time.Duration) bool {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-q.drained:
		return true
	case <-t.C:
		return false
	}
}

func (q *queue) snapshot() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stats
}

// obsEvent and pairEvent wrap an observation and a pair with what they
// hold in memory, roughly, for the queue's byte bound.
func obsEvent(o *Observation) event { return event{obs: o, size: int64(len(o.Raw)) + 256} }

func pairEvent(p *Pair) event {
	size := int64(512)
	if ex := p.Exchange; ex != nil {
		size += int64(len(ex.Request.Body))
		if r := ex.Response; r != nil {
			size += int64(len(r.Body))
			for _, m := range r.Messages {
				size += int64(len(m))
			}
		}
	}
	return event{pair: p, size: size}
}
