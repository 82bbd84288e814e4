package workers

import (
	"context"
	"math"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Group runs tasks on up to a fixed number of goroutines and reports the
// error a serial run would report: that of the lowest-indexed task that
// failed, tasks being indexed in the order Go was called. The error thus
// does not depend on scheduling or on the number of goroutines.
//
// A failure at index i cancels the context of the tasks above i that are
// running and skips those not yet started; the tasks below i run to
// completion, since one of them may fail too and then its error is the one
// reported.
//
// Go must be called from one goroutine (the one that calls Wait).
type Group struct {
	ctx  context.Context
	eg   errgroup.Group
	next int // the index of the next task

	mu      sync.Mutex
	failed  int                  // the lowest failed index, or math.MaxInt
	err     error                // its error
	cancels []context.CancelFunc // of the running tasks, by index
}

// NewGroup returns a Group that runs at most Or(n) tasks at a time, each
// under a context derived from ctx.
func NewGroup(ctx context.Context, n int) *Group {
	g := &Group{ctx: ctx, failed: math.MaxInt}
	g.eg.SetLimit(Or(n))
	return g
}

// Go runs task in a new goroutine once fewer than the limit are running,
// unless a task started earlier has already failed. The context task
// receives is cancelled when ctx is, or when a task started earlier fails.
func (g *Group) Go(task func(ctx context.Context) error) {
	i := g.next
	g.next++
	g.mu.Lock()
	skip := i > g.failed
	g.cancels = append(g.cancels, nil)
	g.mu.Unlock()
	if skip {
		return
	}
	g.eg.Go(func() error {
		ctx, ok := g.start(i)
		if !ok {
			return nil
		}
		err := task(ctx)
		g.finish(i, err)
		return nil
	})
}

// Wait waits for the tasks started and returns the error of the
// lowest-indexed one that failed, or nil.
func (g *Group) Wait() error {
	g.eg.Wait()
	return g.err
}

// start derives task i's context, or reports false when an earlier task
// has failed.
func (g *Group) start(i int) (context.Context, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i > g.failed {
		return nil, false
	}
	ctx, cancel := context.WithCancel(g.ctx)
	g.cancels[i] = cancel
	return ctx, true
}

// finish releases task i's context and records its error.
func (g *Group) finish(i int, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cancels[i]()
	g.cancels[i] = nil
	if err == nil || i >= g.failed {
		return
	}
	g.failed, g.err = i, err
	for _, cancel := range g.cancels[i+1:] {
		if cancel != nil {
			cancel()
		}
	}
}
