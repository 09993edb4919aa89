// Package lint judges recorded traffic: the records of a transcript,
// several at once, each with the expectation and the checks a live run
// used, handed on in line order. A report therefore does not depend on
// which record was judged first, and lint, send and check stay one judge.
package lint

import (
	"context"
	"errors"
	"io"
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
func Judge(r *transcript.Reader, o Options, emit func(*Item) error) error {
	workers := max(o.Workers, 1)
	budget := o.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	type slot struct {
		it     Item
		weight int64
		// done is waited on by the writer until the item is judged: a
		// WaitGroup in the slot, where a channel would be an allocation
		// of its own per record.
		done sync.WaitGroup
	}
	sem := semaphore.NewWeighted(budget)
	// The queue holds the items in line order, judged or not; its
	// capacity bounds how far reading runs ahead of writing.
	queue := make(chan *slot, 4*workers)
	jobs := make(chan *slot)
	// Verdict slices come back once written, so a long transcript
	// allocates about one per item in flight, not one per record.
	spare := make(chan []checks.Verdict, cap(queue)+workers)

	go func() {
		defer close(queue)
		defer close(jobs)
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return
			}
			s := &slot{it: Item{Record: rec, Err: err}, weight: min(weight(&rec), budget)}
			s.done.Add(1)
			if sem.Acquire(ctx, s.weight) != nil {
				return
			}
			select {
			case queue <- s:
			case <-ctx.Done():
				return
			}
			if err != nil || rec.Traffic != nil {
				s.done.Done()
			} else {
				select {
				case jobs <- s:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				if le := (*transcript.LineError)(nil); !errors.As(err, &le) {
					return
				}
			}
		}
	}()

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				select {
				case s, ok := <-jobs:
					if !ok {
						return
					}
					judge(&s.it, o, takeSpare(spare))
					s.done.Done()
				case <-ctx.Done():
					return
				}
			}
		})
	}

	for s := range queue {
		s.done.Wait()
		if err := emit(&s.it); err != nil {
			// The workers finish the record in hand and stop; the
			// reader stops once its current read returns.
			cancel()
			wg.Wait()
			return err
		}
		if s.it.Verdicts != nil {
			select {
			case spare <- s.it.Verdicts[:0]:
			default:
			}
		}
		sem.Release(s.weight)
	}
	wg.Wait()
	return nil
}

// judge builds the expectation a live run built (from the request, the
// facts the transcript carries and the fixture's override) and judges the
// exchange with it.
func judge(it *Item, o Options, dst []checks.Verdict) {
	rec := &it.Record
	it.Expect = expect.Build(&rec.Exchange, rec.Facts, rec.Override)
	in := o.Shared
	in.Fixture, in.Exchange, in.Expect = o.Prefix+rec.Fixture, &rec.Exchange, it.Expect
	it.Verdicts = checks.JudgeInto(dst, in, o.Checks)
}

func takeSpare(spare chan []checks.Verdict) []checks.Verdict {
	select {
	case vs := <-spare:
		return vs
	default:
		return nil
	}
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
