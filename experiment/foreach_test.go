package experiment

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// forEach reports the lowest failed task's error, not the first to fail:
// here the later tasks fail sooner.
func TestForEachLowestError(t *testing.T) {
	for _, w := range []int{1, 4} {
		for run := 0; run < 20; run++ {
			err := forEach(context.Background(), w, 10, silent{}, func(_ context.Context, i int) error {
				if i < 2 {
					return nil
				}
				time.Sleep(time.Duration(10-i) * 100 * time.Microsecond)
				return fmt.Errorf("task %d", i)
			})
			if err == nil || err.Error() != "task 2" {
				t.Fatalf("workers %d, run %d: %v, want task 2", w, run, err)
			}
		}
	}
}
