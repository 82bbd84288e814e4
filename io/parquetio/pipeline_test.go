package parquetio

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// TestOrdered checks that ordered consumes in index order, reports the
// lowest failing index whatever the scheduling, never deadlocks, and
// discards what it does not consume.
func TestOrdered(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		n := rng.IntN(40)
		w := 1 + rng.IntN(8)
		failProduce := -1
		failConsume := -1
		switch rng.IntN(3) {
		case 1:
			if n > 0 {
				failProduce = rng.IntN(n)
			}
		case 2:
			if n > 0 {
				failConsume = rng.IntN(n)
			}
		}
		delays := make([]time.Duration, n)
		for i := range delays {
			delays[i] = time.Duration(rng.IntN(200)) * time.Microsecond
		}
		var live atomic.Int64
		var got []int
		err := ordered(context.Background(), w, n,
			func(ctx context.Context, i int) (int, error) {
				time.Sleep(delays[i])
				if i == failProduce {
					return 0, fmt.Errorf("produce %d", i)
				}
				live.Add(1)
				return i, nil
			},
			func(i, v int) error {
				live.Add(-1)
				if v != i {
					t.Errorf("seed %d: consume(%d) got value %d", seed, i, v)
				}
				got = append(got, i)
				if i == failConsume {
					return fmt.Errorf("consume %d", i)
				}
				return nil
			},
			func(int) { live.Add(-1) })
		wantN := n
		var wantErr string
		switch {
		case failProduce >= 0:
			wantN, wantErr = failProduce, fmt.Sprintf("produce %d", failProduce)
		case failConsume >= 0:
			wantN, wantErr = failConsume+1, fmt.Sprintf("consume %d", failConsume)
		}
		if (err == nil) != (wantErr == "") || (err != nil && err.Error() != wantErr) {
			t.Errorf("seed %d: error %v, want %q", seed, err, wantErr)
		}
		if len(got) != wantN {
			t.Errorf("seed %d: consumed %d values, want %d", seed, len(got), wantN)
		}
		if l := live.Load(); l != 0 {
			t.Errorf("seed %d: %d produced values neither consumed nor discarded", seed, l)
		}
	}
}

func TestOrderedCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 50 {
		err := ordered(ctx, 2, 10, func(ctx context.Context, i int) (int, error) { return i, ctx.Err() },
			func(int, int) error { return nil }, nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	}
	// Cancelled midway.
	ctx, cancel = context.WithCancel(context.Background())
	err := ordered(ctx, 3, 100, func(ctx context.Context, i int) (int, error) {
		if i == 10 {
			cancel()
		}
		return i, ctx.Err()
	}, func(int, int) error { return nil }, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestOrderedPanic(t *testing.T) {
	err := ordered(context.Background(), 2, 5, func(ctx context.Context, i int) (int, error) {
		if i == 3 {
			panic("boom")
		}
		return i, nil
	}, func(int, int) error { return nil }, nil)
	if err == nil || err.Error() != "parquetio: internal error: boom" {
		t.Errorf("got %v, want the panic as an error", err)
	}
}
