package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		scan, live uint64
		want       int
	}{
		{0, 0, gcMax},
		{0, 4 << 30, gcMin},                   // pointer-free arrays, 32 MiB of 4 GiB
		{0, 1 << 30, 3},                       // 32 MiB of 1 GiB
		{1 << 20, 500 << 20, 6},               // the table of 10M transitions: 32 MiB of 500
		{100 << 20, 400 << 20, 25},            // string ids while reading
		{400 << 20, 400 << 20, gcMax},         // all pointers
		{1 << 62, 1 << 62, gcMax},             // no overflow near the top
		{(1 << 62) / 100, 1 << 62, gcMin},     // rounds down, then clamps
		{(1 << 62) / 5, 1 << 62, 20},          //
		{3 << 20, 10 << 20, gcMax},            // small heaps keep gcMinHeadroom
		{3 << 20, 200 << 20, 16},              // 32 MiB of 200
		{3 << 30, 10 << 30, 30},               //
		{^uint64(0) / 20, ^uint64(0), 5},      // 100*scan does not overflow
		{^uint64(0) / 200, ^uint64(0), gcMin}, //
	} {
		if got := gcPercentFor(c.scan, c.live); got != c.want {
			t.Errorf("gcPercentFor(%d, %d) = %d, want %d", c.scan, c.live, got, c.want)
		}
	}
}

// TestTuneGC checks that the watcher runs after collections and lowers the
// headroom for a heap of pointer-free arrays.
func TestTuneGC(t *testing.T) {
	t.Setenv("GOGC", "")
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	stop := tuneGC()
	defer stop()
	big := make([]float64, 32<<20) // 256 MiB, pointer-free
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if p := debug.SetGCPercent(-1); true {
			debug.SetGCPercent(p)
			// 32 MiB of headroom over 256 MiB: 12.
			if p <= 13 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GOGC is %d after collections with a 256 MiB pointer-free heap, want 12", p)
			}
		}
	}
	runtime.KeepAlive(big)
}
