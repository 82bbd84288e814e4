package workers

import (
	"runtime"
	"testing"
)

// Or keeps a positive count and reads GOMAXPROCS for zero and negatives.
func TestOr(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, c := range []struct{ in, want int }{{3, 3}, {1, 1}, {0, procs}, {-2, procs}} {
		if got := Or(c.in); got != c.want {
			t.Errorf("Or(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}
