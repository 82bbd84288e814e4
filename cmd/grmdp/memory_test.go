package main

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"1024", 1024}, {"500MB", 500e6}, {"8GiB", 8 << 30}, {"8gib", 8 << 30}, {"1.5GB", 1.5e9},
		{"2G", 2 << 30}, {"512 MiB", 512 << 20}, {"64k", 64 << 10}, {"3TB", 3e12}, {"10B", 10},
	} {
		got, err := parseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "lots", "-1GB", "8 GiBs", "1e400", "NaN", "GiB"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

// The estimate grows with rows and state width, and the default limit is
// a sane fraction of the machine.
func TestMemoryModel(t *testing.T) {
	if a, b := estimateMemory(1e6, 3, false), estimateMemory(4e6, 3, false); !(b > a && a > memBase) {
		t.Errorf("estimate does not grow with rows: %d, %d", a, b)
	}
	if a, b := estimateMemory(1e6, 3, false), estimateMemory(1e6, 12, false); !(b > a) {
		t.Errorf("estimate does not grow with width: %d, %d", a, b)
	}
	// The calibration points of memory.go lie below the estimate.
	for _, p := range []struct {
		rows int64
		w    int
		list bool
		mib  float64
	}{{1e6, 1, false, 106}, {4e6, 1, false, 269}, {1e6, 3, false, 146}, {4e6, 3, false, 333},
		{1e6, 12, false, 287}, {4e6, 12, false, 759}, {1e6, 40, true, 893}, {4e6, 40, true, 2556}} {
		if got := float64(estimateMemory(p.rows, p.w, p.list)) / (1 << 20); got < p.mib {
			t.Errorf("%d rows, width %d: estimate %.0f MiB is below the measured %.0f MiB", p.rows, p.w, got, p.mib)
		}
	}
	// Row groups decoded ahead count beyond the four of the calibration.
	fp := parquetio.Footprint{RowGroups: 100, MaxRowGroupRows: 1 << 20}
	if got := inflightMemory(2, fp, 3); got != 0 {
		t.Errorf("2 workers: %d bytes in flight beyond the calibration, want 0", got)
	}
	if got, want := inflightMemory(64, fp, 3), int64(96)*(1<<20)*128; got != want {
		t.Errorf("64 workers, 100 row groups: %d bytes in flight, want %d", got, want)
	}
	if runtime.GOOS == "linux" {
		lim := defaultMemoryLimit()
		if phys := physicalMemory(); lim <= 0 || lim > phys {
			t.Errorf("default limit %d, physical memory %d", lim, phys)
		}
	}
}

// A tiny --max-memory refuses before reading, naming the flag and what to
// do; 0 means no limit; the default lets a normal run through (every other
// test relies on that too).
func TestMaxMemoryFlag(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "30,20,50")
	out := filepath.Join(dir, "p.parquet")
	for _, cmd := range [][]string{
		{"solve", "-o", out}, {"inspect"}, {"compare", "-o", filepath.Join(dir, "cmp")},
	} {
		code, _, stderr := grmdp(t, append(append(cmd, "--max-memory", "100KiB"), data)...)
		checkFailure(t, code, stderr, exitBadData, "", data, "--max-memory 100KiB", "grmdp prepare")
	}
	mustRun(t, "solve", "-o", out, data)
	mustRun(t, "eval", "--bootstrap", "0", "--permutations", "0", "--policy", out, data)
	code, _, stderr := grmdp(t, "eval", "--max-memory", "1KB", "--policy", out, data)
	checkFailure(t, code, stderr, exitBadData, "", "--max-memory 1KB")
	mustRun(t, "solve", "--max-memory", "0", "-o", out, data)
	mustRun(t, "solve", "--max-memory", "16GiB", "-o", out, data)
}
