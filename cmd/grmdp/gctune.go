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
	gen := gcGen.Add(1) // a watcher of an earlier call stops at its next run
	debug.SetGCPercent(gcMax)
	gcPercent.Store(gcMax)
	watchGC(gen)
	return func() { gcGen.CompareAndSwap(gen, gen+1) }
}

// fixedGC stops the tuning and sets the fixed headroom gcMax (unless GOGC
// is set), for the commands whose heap the tuning was not measured on:
// simulate and experiment build their tables from the simulator, whose
// churn of allocations made them about 30% slower with the tuned headroom
// (simulate of 4M transitions: 5.8 s at GOGC=50, 6.6-7.9 s tuned).
func fixedGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	gcGen.Add(1)
	gcPercent.Store(gcMax)
	debug.SetGCPercent(gcMax)
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
	gcPercent atomic.Int64 // what the tuning last set
	gcGen     atomic.Int64 // the current tuneGC's generation; watchers of others stop
)

// watchGC arms a sentinel whose finalizer, after the next collection, sets
// the headroom and arms the next one, while gen is the current generation.
func watchGC(gen int64) {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		if gcGen.Load() != gen {
			return
		}
		samples := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}, {Name: "/gc/heap/live:bytes"}}
		metrics.Read(samples)
		if samples[0].Value.Kind() == metrics.KindUint64 && samples[1].Value.Kind() == metrics.KindUint64 {
			p := int64(gcPercentFor(samples[0].Value.Uint64(), samples[1].Value.Uint64()))
			if p != gcPercent.Load() && gcGen.Load() == gen {
				gcPercent.Store(p)
				debug.SetGCPercent(int(p))
			}
		}
		watchGC(gen)
	})
}
