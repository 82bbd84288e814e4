package workers

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// Wait reports the lowest-indexed failure whatever the order in which the
// tasks fail: here the later tasks fail first.
func TestGroupLowestError(t *testing.T) {
	for _, n := range []int{1, 2, 8} {
		for run := 0; run < 20; run++ {
			g := NewGroup(context.Background(), n)
			for i := 0; i < 12; i++ {
				g.Go(func(ctx context.Context) error {
					if i < 3 {
						return nil
					}
					time.Sleep(time.Duration(12-i) * 100 * time.Microsecond)
					return fmt.Errorf("task %d", i)
				})
			}
			if err := g.Wait(); err == nil || err.Error() != "task 3" {
				t.Fatalf("workers %d: got %v, want task 3", n, err)
			}
		}
	}
}

// A failure cancels the tasks above it and leaves those below it running:
// a task below that fails after it is the one reported.
func TestGroupCancelsOnlyLater(t *testing.T) {
	g := NewGroup(context.Background(), 3)
	failed := make(chan struct{})
	later := make(chan error, 1)
	g.Go(func(ctx context.Context) error {
		<-failed
		select {
		case <-ctx.Done():
			return errors.New("task 0 cancelled")
		case <-time.After(10 * time.Millisecond):
		}
		return errors.New("task 0")
	})
	g.Go(func(ctx context.Context) error {
		defer close(failed)
		return errors.New("task 1")
	})
	g.Go(func(ctx context.Context) error {
		<-ctx.Done()
		later <- ctx.Err()
		return ctx.Err()
	})
	if err := g.Wait(); err == nil || err.Error() != "task 0" {
		t.Fatalf("got %v, want task 0", err)
	}
	select {
	case err := <-later:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("task 2's context: got %v, want cancelled", err)
		}
	default: // task 2 never started
	}
}

// Tasks added after a failure do not run; Wait with no failure is nil.
func TestGroupSkipsAfterFailure(t *testing.T) {
	g := NewGroup(context.Background(), 1)
	g.Go(func(context.Context) error { return errors.New("first") })
	g.Wait()
	ran := false
	g.Go(func(context.Context) error { ran = true; return nil })
	if err := g.Wait(); err == nil || err.Error() != "first" || ran {
		t.Errorf("got %v (later task ran: %v), want first and no run", err, ran)
	}
	ok := NewGroup(context.Background(), 4)
	for range 10 {
		ok.Go(func(context.Context) error { return nil })
	}
	if err := ok.Wait(); err != nil {
		t.Errorf("got %v, want nil", err)
	}
}
