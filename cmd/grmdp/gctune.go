package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The collector's headroom (GOGC) is the share of the live heap that may
// be garbage before the next collection: the peak heap is about live *
// (1 + GOGC/100). grmdp's live heap is mostly a few large pointer-free
// arrays (the table), which a collection does not scan, plus decoded row
// groups that become garbage at once; a small headroom then costs little
// time and saves a lot of memory (on 10M transitions with GOGC=10 instead
// of 50, peak RSS 836 -> 672 MiB, wall time unchanged; at 32 MiB of
// headroom, about GOGC=6 there, 618 MiB). But inputs with
// string ids keep millions of strings alive while reading, every
// collection scans them, and a small headroom there costs time (GOGC=10:
// 40% slower on the same rows with string ids).
//
// So after every collection tuneGC sets the headroom in proportion to the
// share of the live heap the collector must scan (gcPercentFor): small when
// the heap is pointer-free arrays, up to 50 when it is mostly pointers.
// GOGC, when set in the environment, wins. The returned stop ends the
// tuning after the next collection (for tests; main never stops it).
func tuneGC() (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	debug.SetGCPercent(gcMax)
	gcPercent = gcMax
	gcWatching.Store(true)
	watchGC()
	return func() { gcWatching.Store(false) }
}

const (
	gcMin = 2
	gcMax = 50
)

// gcMinHeadroom is the least garbage, in bytes, let pile up between
// collections: a collection has fixed costs (a few milliseconds here),
// and a heap collected every few megabytes spends its time in them (16 MiB
// made a solve with d = 100,000 12% slower than 32 MiB).
const gcMinHeadroom = 32 << 20

// gcPercentFor returns the headroom for a live heap of live bytes of which
// scan bytes may hold pointers: 100*scan/live, but at least gcMinHeadroom
// bytes, within gcMin..gcMax. The collector's work per cycle is about the
// scanned bytes, so the work per byte allocated, scan/headroom, stays below
// one.
func gcPercentFor(scan, live uint64) int {
	if live == 0 {
		return gcMax
	}
	p := 100 * max(float64(scan), gcMinHeadroom) / float64(live)
	return int(min(gcMax, max(gcMin, p)))
}

// gcSentinel is an object nothing refers to: its finalizer runs after the
// collection that finds it unreachable, and watches for the next one.
type gcSentinel struct{ _ *int } // a pointer keeps it out of the tiny allocator

var (
	gcSamples  = []metrics.Sample{{Name: "/gc/scan/heap:bytes"}, {Name: "/gc/heap/live:bytes"}}
	gcPercent  int // what tuneGC last set; only the finalizer goroutine writes it after tuneGC
	gcWatching atomic.Bool
)

func watchGC() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		metrics.Read(gcSamples)
		if gcSamples[0].Value.Kind() == metrics.KindUint64 && gcSamples[1].Value.Kind() == metrics.KindUint64 {
			if p := gcPercentFor(gcSamples[0].Value.Uint64(), gcSamples[1].Value.Uint64()); p != gcPercent {
				gcPercent = p
				debug.SetGCPercent(p)
			}
		}
		if gcWatching.Load() {
			watchGC()
		}
	})
}
