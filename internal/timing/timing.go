// Package timing measures the wall time of a run's phases, for
// `grmdp --timings`: where a solve's time goes, in the run itself, without a
// profiler.
//
// A [Recorder] travels in a context. Code marks a phase with
//
//	defer timing.Start(ctx, "statistics")()
//
// and a phase entered several times (one per backward round, say) adds up
// its durations. Without a recorder in the context, Start costs one context
// lookup and records nothing, so phases can be marked in hot paths' callers
// (never per row).
package timing

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

type key struct{}

// Recorder collects the phases of one run. It is safe for concurrent use.
type Recorder struct {
	start  time.Time
	mu     sync.Mutex
	phases []Phase
	index  map[string]int
	seq    atomic.Int64 // numbers the entries in the order they start
}

// Phase is one named phase: when it was first entered (since the
// recorder's start), its total wall time over every entry, and the number
// of entries.
type Phase struct {
	Name  string
	First time.Duration
	Total time.Duration
	Count int

	seq int64 // the earliest entry's number, for phases that start at once
}

// New returns a recorder whose clock starts now.
func New() *Recorder {
	return &Recorder{start: time.Now(), index: map[string]int{}}
}

// With returns ctx carrying r.
func With(ctx context.Context, r *Recorder) context.Context {
	return context.WithValue(ctx, key{}, r)
}

// From returns the recorder ctx carries, or nil.
func From(ctx context.Context) *Recorder {
	r, _ := ctx.Value(key{}).(*Recorder)
	return r
}

// Start enters the phase name and returns the function that leaves it. With
// no recorder in ctx both do nothing.
func Start(ctx context.Context, name string) (stop func()) {
	r := From(ctx)
	if r == nil {
		return func() {}
	}
	seq := r.seq.Add(1)
	t0 := time.Now()
	return func() { r.add(name, seq, t0, time.Since(t0)) }
}

func (r *Recorder) add(name string, seq int64, t0 time.Time, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, ok := r.index[name]
	if !ok {
		i = len(r.phases)
		r.index[name] = i
		r.phases = append(r.phases, Phase{Name: name, First: t0.Sub(r.start), seq: seq})
	}
	p := &r.phases[i]
	p.Total += d
	p.Count++
	// A phase's first entry may finish after a later one began (parallel
	// workers): First is the earliest start.
	if seq < p.seq {
		p.First, p.seq = t0.Sub(r.start), seq
	}
}

// Phases returns the phases in the order they were first entered.
func (r *Recorder) Phases() []Phase {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Phase(nil), r.phases...)
	// Insertion order is the order of first completion: sort by the
	// earliest entry's number, which orders starts even when the clock
	// cannot tell them apart.
	slices.SortFunc(out, func(a, b Phase) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

// Write prints one line per phase to w, "grmdp: timing: NAME  SECONDS s",
// with the number of entries when there were several, then the run's wall
// time so far. Nested phases are printed as they are: their times are
// contained in their parents'. A phase entered by several goroutines at
// once (eval's bootstrap replicates) adds up their times, which can then
// exceed the wall time.
func (r *Recorder) Write(w io.Writer) {
	for _, p := range r.Phases() {
		times := ""
		if p.Count > 1 {
			times = fmt.Sprintf(" (%d times)", p.Count)
		}
		fmt.Fprintf(w, "grmdp: timing: %-32s %8.3f s  at %7.3f s%s\n", p.Name, p.Total.Seconds(), p.First.Seconds(), times)
	}
	fmt.Fprintf(w, "grmdp: timing: %-32s %8.3f s\n", "whole run", time.Since(r.start).Seconds())
}
