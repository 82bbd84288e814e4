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
	type slot struct {
		v        T
		err      error
		launched bool // holds a window token
		done     chan struct{}
	}
	slots := make([]slot, n)
	for i := range slots {
		slots[i].done = make(chan struct{})
	}
	var stop atomic.Int64 // lowest failed index
	stop.Store(math.MaxInt64)
	fail := func(i int) {
		for {
			cur := stop.Load()
			if int64(i) >= cur || stop.CompareAndSwap(cur, int64(i)) {
				return
			}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	window := make(chan struct{}, 2*w)
	var g errgroup.Group
	g.SetLimit(w)
	prodDone := make(chan struct{})
	go func() {
		defer close(prodDone)
		i := 0
		defer func() {
			// Mark the tasks never started.
			for ; i < n; i++ {
				slots[i].err = context.Canceled
				if err := ctx.Err(); err != nil {
					slots[i].err = err
				}
				close(slots[i].done)
			}
		}()
		for ; i < n; i++ {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			if int64(i) > stop.Load() {
				return
			}
			s := &slots[i]
			s.launched = true
			idx := i
			g.Go(func() error {
				defer close(s.done)
				if int64(idx) > stop.Load() {
					s.err = context.Canceled
					return nil
				}
				if err := ctx.Err(); err != nil {
					s.err = err
					return nil
				}
				defer func() {
					if r := recover(); r != nil {
						var zero T
						s.v, s.err = zero, fmt.Errorf("parquetio: internal error: %v", r)
					}
					if s.err != nil {
						fail(idx)
					}
				}()
				s.v, s.err = produce(ctx, idx)
				return nil
			})
		}
	}()

	var firstErr error
	consumed := 0
	for ; consumed < n; consumed++ {
		s := &slots[consumed]
		<-s.done
		if s.launched {
			<-window
		}
		if s.err != nil {
			firstErr = s.err
			break
		}
		// consume owns the value from here on, even when it fails.
		err := consume(consumed, s.v)
		var zero T
		s.v = zero
		if err != nil {
			firstErr = err
			break
		}
	}
	if firstErr != nil {
		fail(consumed)
		cancel()
	}
	<-prodDone
	g.Wait()
	if discard != nil {
		// Slot consumed failed or was handed to consume; the rest wait.
		for i := consumed + 1; i < n; i++ {
			var zero T
			if s := &slots[i]; s.err == nil {
				discard(s.v)
				s.v = zero
			}
		}
	}
	return firstErr
}
