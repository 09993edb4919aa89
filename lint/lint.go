// Package lint judges recorded traffic: the records of a transcript,
// several at once, each with the expectation and the checks a live run
// used, handed on in line order. A report therefore does not depend on
// which record was judged first, and lint, send and check stay one judge.
package lint

import (
	"bytes"
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
	// line is the record's text until a worker parses it.
	line transcript.Line
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
// once the workers are done; the reading goroutine, and the settling one
// that waits for it, end with its current read (close the input to end
// them sooner).
//
// A record passes four hands: the reader cuts the transcript into lines,
// a worker parses them, one goroutine settles each record's facts and
// stream in line order (what a record declares bears on the records
// after it), a worker judges it, and emit writes it. Records go from hand
// to hand in batches: a hand-over between goroutines costs about what
// judging a small record does, and one per batch leaves the cores to the
// parsing and the judging. A batch is handed on early when the next
// record is not in the reader's buffer yet, so a record read from a pipe
// is judged as it comes.
func Judge(r *transcript.Reader, o Options, emit func(*Item) error) error {
	workers := max(o.Workers, 1)
	budget := o.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	sem := semaphore.NewWeighted(budget)
	// parsing and queue hold the batches in line order, before and after
	// they are settled; their capacity bounds how far reading runs ahead
	// of writing: a batch per worker keeps them busy.
	parsing := make(chan *batch, workers)
	queue := make(chan *batch, workers)
	// jobs are batches to parse or to judge, for whichever worker is free.
	jobs := make(chan job)
	// Batches come back once written, with the verdict slices of their
	// items and the buffer of their lines: a long transcript allocates
	// about one of each per item in flight, not one per record.
	spare := make(chan *batch, cap(parsing)+cap(queue)+workers+2)

	go func() {
		defer close(parsing)
		b := takeBatch(spare)
		// send hands b on to be parsed and settled; false: the run was
		// stopped.
		send := func() bool {
			if len(b.items) == 0 {
				return true
			}
			// Added before the job is sent, so that the settler, which
			// waits for it, gets only a batch that a worker has taken.
			b.parsed.Add(1)
			select {
			case jobs <- job{b, parse}:
			case <-ctx.Done():
				b.parsed.Done()
				return false
			}
			select {
			case parsing <- b:
			case <-ctx.Done():
				return false
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
			l, err := r.Read()
			if err == io.EOF {
				send()
				return
			}
			w := min(weight(len(l.Text)), budget)
			if !sem.TryAcquire(w) {
				// The batch in hand holds budget that is freed only once
				// it is written: hand it on before waiting for more.
				if !send() || sem.Acquire(ctx, w) != nil {
					return
				}
			}
			it := Item{Err: err}
			if err == nil {
				it.line = l
				it.line.Text = b.keepText(l.Text)
			}
			b.items = append(b.items, it)
			b.weight += w
			if err != nil {
				if le := (*transcript.LineError)(nil); !errors.As(err, &le) {
					send()
					return
				}
			}
		}
	}()

	// The settler: facts and streams in line order, then on to a worker
	// to judge and to the writer. It closes jobs only once the reader has
	// closed parsing, so that no job is sent on a closed channel; when the
	// run is stopped it returns at once and leaves jobs open (the workers
	// stop on ctx), so that Judge can wait for it while the reader may
	// still be blocked in a read.
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		defer close(queue)
		var learner transcript.Learner
		streams := checks.NewStreams()
		for {
			var b *batch
			select {
			case next, ok := <-parsing:
				if !ok {
					close(jobs)
					return
				}
				b = next
			case <-ctx.Done():
				return
			}
			b.parsed.Wait()
			if ctx.Err() != nil {
				return
			}
			for i := range b.items {
				it := &b.items[i]
				if it.Err != nil {
					continue
				}
				learner.Settle(&it.line, &it.Record)
				if it.Record.Traffic == nil {
					it.reused = streams.Reused(&it.Record.Exchange)
					b.judged = true
				}
			}
			// Read before the writer has b, which it may empty once judged.
			judged := b.judged
			if judged {
				b.done.Add(1)
			}
			select {
			case queue <- b:
			case <-ctx.Done():
				return
			}
			if judged {
				select {
				case jobs <- job{b, judge}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			// Memory each worker's parsing and judging reuse, record after
			// record.
			var parser transcript.Parser
			scratch := &checks.Scratch{}
			for {
				select {
				case j, ok := <-jobs:
					if !ok {
						return
					}
					if j.step == parse {
						j.b.parse(ctx, &parser)
						j.b.parsed.Done()
						continue
					}
					j.b.judge(ctx, o, scratch)
					j.b.done.Done()
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
				<-settled
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
	<-settled
	return nil
}

// maxBatch is the most records one batch carries: enough that handing it
// on costs little per record, few enough that the workers share a short
// transcript and that the batches in flight (about three per worker)
// hold no more memory than the records did one by one.
const maxBatch = 16

// A job is a batch for a worker, to parse or to judge.
type job struct {
	b    *batch
	step step
}

type step int

const (
	parse step = iota
	judge
)

// A batch is records handed on together, in line order.
type batch struct {
	items  []Item
	weight int64
	judged bool // an item is an exchange, for a worker to judge
	// text holds the lines of the items, one after another: one buffer
	// for the batch, kept from its last use.
	text []byte
	// spare are the verdict slices of the items, kept from the batch's
	// last use.
	spare [][]checks.Verdict
	// parsed and done are waited on by the settler and the writer until
	// the batch is parsed and judged: WaitGroups in the batch, where
	// channels would be allocations of their own per batch.
	parsed, done sync.WaitGroup
}

func takeBatch(spare chan *batch) *batch {
	select {
	case b := <-spare:
		return b
	default:
		return &batch{items: make([]Item, 0, maxBatch)}
	}
}

// maxBatchText bounds a line kept in a batch's buffer: a longer one
// (rare, and up to transcript.MaxLine) has memory of its own, dropped
// once written, so a buffer kept for reuse stays small.
const maxBatchText = 64 << 10

// keepText is a copy of line, which the reader reuses, for the batch's
// life.
func (b *batch) keepText(line []byte) []byte {
	if len(line) > maxBatchText {
		return bytes.Clone(line)
	}
	// An append past the buffer's capacity moves it; the lines kept
	// before stay where they were, in memory of their own.
	start := len(b.text)
	b.text = append(b.text, line...)
	return b.text[start:len(b.text):len(b.text)]
}

// parse reads the lines of b's items into their records.
func (b *batch) parse(ctx context.Context, p *transcript.Parser) {
	for i := range b.items {
		it := &b.items[i]
		if it.Err != nil {
			continue
		}
		if ctx.Err() != nil {
			return // the writer stopped: nothing more is emitted
		}
		it.Record, it.Err = p.Parse(&it.line)
		it.line.Text = nil
	}
}

// judge judges the exchanges of b.
func (b *batch) judge(ctx context.Context, o Options, scratch *checks.Scratch) {
	for i := range b.items {
		it := &b.items[i]
		if it.Err != nil || it.Record.Traffic != nil {
			continue
		}
		if ctx.Err() != nil {
			return // the writer stopped: nothing more is emitted
		}
		judgeItem(it, o, b.verdicts(i), scratch)
		b.keep(i, it.Verdicts)
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
// bodies are garbage once written) but not the verdict slices or the
// buffer of lines, unless lines near maxBatchText grew it past what the
// batches kept for reuse should hold: the budget does not count it.
func (b *batch) reset() {
	clear(b.items)
	b.items, b.weight, b.judged = b.items[:0], 0, false
	if cap(b.text) > maxKeptText {
		b.text = nil
	} else {
		b.text = b.text[:0]
	}
}

// maxKeptText bounds the buffer of lines a batch keeps for its next use:
// typical lines fill a few kilobytes of it.
const maxKeptText = 256 << 10

// judge builds the expectation a live run built (from the request, the
// facts the transcript carries and the fixture's override) and judges the
// exchange with it.
func judgeItem(it *Item, o Options, dst []checks.Verdict, scratch *checks.Scratch) {
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

// weight is about the memory a record holds: its line, the bodies read
// from it (about as long), and a little for the rest.
func weight(line int) int64 {
	return 1<<10 + 2*int64(line)
}
