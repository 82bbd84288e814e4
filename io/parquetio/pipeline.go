package parquetio

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// ordered runs produce(i) for i = 0..n-1 on up to w goroutines and hands the
// results to consume, serially and in index order, as soon as each is ready.
//
// The error returned is that of the lowest index whose produce or consume
// failed, so it does not depend on scheduling or on w: a failure at index i
// stops the tasks above i but lets those below finish. At most 2*w results
// wait to be consumed, which bounds memory. Results that are never consumed
// are passed to discard (which may be nil). When ctx is cancelled, ordered
// returns ctx's error.
func ordered[T any](ctx context.Context, w, n int, produce func(ctx context.Context, i int) (T, error), consume func(i int, v T) error, discard func(T)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := newPipeline[T](ctx, w, n)
	var g errgroup.Group
	g.SetLimit(w)
	prodDone := make(chan struct{})
	go func() {
		defer close(prodDone)
		p.launch(&g, produce)
	}()
	consumed, err := p.consume(consume)
	if err != nil {
		p.fail(consumed)
		cancel()
	}
	<-prodDone
	g.Wait()
	if discard != nil {
		p.discard(consumed+1, discard)
	}
	return err
}

// pipeline is the state ordered shares between its producer, its tasks
// and its consumer.
type pipeline[T any] struct {
	ctx    context.Context
	slots  []slot[T]
	stop   atomic.Int64  // the lowest failed index
	window chan struct{} // a token for each result launched and not yet consumed
}

// slot holds task i's result.
type slot[T any] struct {
	v        T
	err      error
	launched bool // holds a window token
	done     chan struct{}
}

func newPipeline[T any](ctx context.Context, w, n int) *pipeline[T] {
	p := &pipeline[T]{ctx: ctx, slots: make([]slot[T], n), window: make(chan struct{}, 2*w)}
	for i := range p.slots {
		p.slots[i].done = make(chan struct{})
	}
	p.stop.Store(math.MaxInt64)
	return p
}

// fail records a failure at index i.
func (p *pipeline[T]) fail(i int) {
	for {
		cur := p.stop.Load()
		if int64(i) >= cur || p.stop.CompareAndSwap(cur, int64(i)) {
			return
		}
	}
}

// launch starts the tasks in index order on g, each once a window token
// is free, until one above a failed index would start or ctx is done; it
// marks the tasks it never starts as cancelled.
func (p *pipeline[T]) launch(g *errgroup.Group, produce func(ctx context.Context, i int) (T, error)) {
	i := 0
	defer func() {
		for ; i < len(p.slots); i++ {
			p.slots[i].err = context.Canceled
			if err := p.ctx.Err(); err != nil {
				p.slots[i].err = err
			}
			close(p.slots[i].done)
		}
	}()
	for ; i < len(p.slots); i++ {
		select {
		case p.window <- struct{}{}:
		case <-p.ctx.Done():
			return
		}
		if int64(i) > p.stop.Load() {
			return
		}
		p.slots[i].launched = true
		idx := i
		g.Go(func() error {
			p.run(idx, produce)
			return nil
		})
	}
}

// run is task i: it calls produce unless the task is no longer wanted,
// turning a panic into an error, and records a failure.
func (p *pipeline[T]) run(i int, produce func(ctx context.Context, i int) (T, error)) {
	s := &p.slots[i]
	defer close(s.done)
	if int64(i) > p.stop.Load() {
		s.err = context.Canceled
		return
	}
	if err := p.ctx.Err(); err != nil {
		s.err = err
		return
	}
	defer func() {
		if r := recover(); r != nil {
			var zero T
			s.v, s.err = zero, fmt.Errorf("parquetio: internal error: %v", r)
		}
		if s.err != nil {
			p.fail(i)
		}
	}()
	s.v, s.err = produce(p.ctx, i)
}

// consume hands the results to f in index order as each is ready, until
// one failed or f fails: it returns that index and error, or n and nil.
func (p *pipeline[T]) consume(f func(i int, v T) error) (int, error) {
	for i := range p.slots {
		s := &p.slots[i]
		<-s.done
		if s.launched {
			<-p.window
		}
		if s.err != nil {
			return i, s.err
		}
		// f owns the value from here on, even when it fails.
		err := f(i, s.v)
		var zero T
		s.v = zero
		if err != nil {
			return i, err
		}
	}
	return len(p.slots), nil
}

// discard passes the results from index from on that were produced and
// never consumed to f.
func (p *pipeline[T]) discard(from int, f func(T)) {
	for i := from; i < len(p.slots); i++ {
		var zero T
		if s := &p.slots[i]; s.err == nil {
			f(s.v)
			s.v = zero
		}
	}
}
