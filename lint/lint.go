// Package lint judges recorded traffic: the records of a transcript,
// several at once, each with the expectation and the checks a live run
// used, handed on in line order. A report therefore does not depend on
// which record was judged first, and lint, send and check stay one judge.
package lint

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/wymcp/wymcp-check/checks"
	"github.com/wymcp/wymcp-check/envelope"
	"github.com/wymcp/wymcp-check/expect"
	"github.com/wymcp/wymcp-check/transcript"
	"golang.org/x/sync/semaphore"
)

// An Item is one record of a transcript, judged, or the error of its line.
type Item struct {
	Record transcript.Record
	// Err is what reading the line gave instead of a record: a
	// *transcript.LineError, after which reading goes on, or another
	// error, which ends the transcript.
	Err error
	// Expect and Verdicts are set for an exchange record. A traffic
	// record (a relay's recording) is left to the caller, which judges
	// the client's messages in order.
	Expect   *expect.Expectation
	Verdicts []checks.Verdict
	// reused are the event ids of the record's SSE stream that an
	// earlier record's stream of its session used: read in line order,
	// before the records part for the workers.
	reused []checks.Reuse
}

// Options are what every exchange of a transcript is judged with.
type Options struct {
	// Workers is how many records are judged at once; below 1 means 1.
	Workers int
	// Prefix goes before each record's fixture name in verdicts (the
	// file's name when several are linted).
	Prefix string
	// Shared holds the judge's inputs common to all exchanges: the
	// contract, the schemas, the tool cache. Its Fixture, Exchange and
	// Expect are set per record.
	Shared checks.Input
	Checks []*checks.Check
	// Budget bounds the bytes of the records read but not yet handed on;
	// 0 means DefaultBudget. One record larger than the budget is still
	// judged, alone.
	Budget int64
}

// DefaultBudget is the bytes of records in flight: a transcript line may
// be as long as transcript.MaxLine, and a few of them at once are enough
// to keep every worker busy without holding a whole file in memory.
const DefaultBudget = 2 * transcript.MaxLine

// Judge reads r to its end and hands each item to emit in line order.
// emit must be done with the item's verdicts when it returns: their
// memory is reused. An error from emit stops the judging and is returned
// once the workers are done; the reading goroutine ends with its current
// read (close the input to end it sooner).
//
// Records go from the reader to a worker and on to emit in batches: a
// hand-over between goroutines costs about what judging a small record
// does, and one per batch leaves the cores to the judging. A batch is
// handed on early when the next record is not in the reader's buffer
// yet, so a record read from a pipe is judged as it comes.
func Judge(r *transcript.Reader, o Options, emit func(*Item) error) error {
	workers := max(o.Workers, 1)
	budget := o.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	sem := semaphore.NewWeighted(budget)
	streams := checks.NewStreams()
	// The queue holds the batches in line order, judged or not; its
	// capacity bounds how far reading runs ahead of writing: a batch per
	// worker keeps them busy.
	queue := make(chan *batch, workers)
	jobs := make(chan *batch)
	// Batches come back once written, with the verdict slices of their
	// items: a long transcript allocates about one of each per item in
	// flight, not one per record.
	spare := make(chan *batch, cap(queue)+cap(jobs)+workers+1)

	go func() {
		defer close(queue)
		defer close(jobs)
		b := takeBatch(spare)
		// send hands b on, to the writer and, when it holds a record to
		// judge, to a worker; false: the run was stopped.
		send := func() bool {
			if len(b.items) == 0 {
				return true
			}
			judged := b.judged
			if judged {
				b.done.Add(1)
			}
			select {
			case queue <- b:
			case <-ctx.Done():
				return false
			}
			if judged {
				select {
				case jobs <- b:
				case <-ctx.Done():
					return false
				}
			}
			b = takeBatch(spare)
			return true
		}
		for {
			if n := len(b.items); n > 0 && (n == maxBatch || !r.Ready()) {
				if !send() {
					return
				}
			}
			rec, err := r.Next()
			if err == io.EOF {
				send()
				return
			}
			w := min(weight(&rec), budget)
			if !sem.TryAcquire(w) {
				// The batch in hand holds budget that is freed only once
				// it is written: hand it on before waiting for more.
				if !send() || sem.Acquire(ctx, w) != nil {
					return
				}
			}
			it := Item{Record: rec, Err: err}
			if err == nil && rec.Traffic == nil {
				it.reused = streams.Reused(&rec.Exchange)
			}
			b.items = append(b.items, it)
			b.weight += w
			b.judged = b.judged || err == nil && rec.Traffic == nil
			if err != nil {
				if le := (*transcript.LineError)(nil); !errors.As(err, &le) {
					send()
					return
				}
			}
		}
	}()

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			// Memory each worker's judging reuses, exchange after exchange.
			scratch := &checks.Scratch{}
			for {
				select {
				case b, ok := <-jobs:
					if !ok {
						return
					}
					for i := range b.items {
						it := &b.items[i]
						if it.Err != nil || it.Record.Traffic != nil {
							continue
						}
						if ctx.Err() != nil {
							break // the writer stopped: nothing more is emitted
						}
						judge(it, o, b.verdicts(i), scratch)
						b.keep(i, it.Verdicts)
					}
					b.done.Done()
				case <-ctx.Done():
					return
				}
			}
		})
	}

	for b := range queue {
		b.done.Wait()
		for i := range b.items {
			if err := emit(&b.items[i]); err != nil {
				// The workers finish the batch in hand and stop; the
				// reader stops once its current read returns.
				cancel()
				wg.Wait()
				return err
			}
		}
		sem.Release(b.weight)
		b.reset()
		select {
		case spare <- b:
		default:
		}
	}
	wg.Wait()
	return nil
}

// maxBatch is the most records one batch carries: enough that handing it
// on costs little per record, few enough that the workers share a short
// transcript and that the batches in flight (about two per worker) hold
// no more memory than the records did one by one.
const maxBatch = 16

// A batch is records handed on together, in line order.
type batch struct {
	items  []Item
	weight int64
	judged bool // an item is an exchange, for a worker to judge
	// spare are the verdict slices of the items, kept from the batch's
	// last use.
	spare [][]checks.Verdict
	// done is waited on by the writer until the batch is judged: a
	// WaitGroup in the batch, where a channel would be an allocation of
	// its own per batch.
	done sync.WaitGroup
}

func takeBatch(spare chan *batch) *batch {
	select {
	case b := <-spare:
		return b
	default:
		return &batch{items: make([]Item, 0, maxBatch)}
	}
}

// verdicts is the slice item i's verdicts may be appended to.
func (b *batch) verdicts(i int) []checks.Verdict {
	if i < len(b.spare) {
		return b.spare[i][:0]
	}
	return nil
}

// keep holds item i's verdicts for the batch's next use.
func (b *batch) keep(i int, vs []checks.Verdict) {
	for len(b.spare) <= i {
		b.spare = append(b.spare, nil)
	}
	b.spare[i] = vs
}

// reset empties b for its next use, dropping the records it held (their
// bodies are garbage once written) but not the verdict slices.
func (b *batch) reset() {
	clear(b.items)
	b.items, b.weight, b.judged = b.items[:0], 0, false
}

// judge builds the expectation a live run built (from the request, the
// facts the transcript carries and the fixture's override) and judges the
// exchange with it.
func judge(it *Item, o Options, dst []checks.Verdict, scratch *checks.Scratch) {
	rec := &it.Record
	it.Expect = expect.Build(&rec.Exchange, rec.Facts, rec.Override)
	in := o.Shared
	in.Fixture, in.Exchange, in.Expect, in.Scratch, in.Reused = o.Prefix+rec.Fixture, &rec.Exchange, it.Expect, scratch, it.reused
	if len(rec.Exchange.Redacted) > 0 {
		// A secret the live run saw echoed stands as its marker.
		in.Secrets = append(slices.Clone(in.Secrets), envelope.MarkedSecrets(rec.Exchange.Redacted)...)
	}
	it.Verdicts = checks.JudgeInto(dst, in, o.Checks)
}

// weight is about the memory a record holds: its bodies, and a little
// for the rest.
func weight(rec *transcript.Record) int64 {
	n := int64(1 << 10)
	if t := rec.Traffic; t != nil {
		return n + int64(len(t.Body))
	}
	ex := &rec.Exchange
	n += int64(len(ex.Request.Body))
	if ex.Response != nil {
		n += int64(len(ex.Response.Body))
		if ex.Transport == envelope.Stdio {
			// the messages of a stdio body are slices of it
			n += int64(24 * len(ex.Response.Messages))
		}
	}
	return n
}
