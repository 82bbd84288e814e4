package main

import (
	"path/filepath"
	"runtime"
	"testing"
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

// The default limit is a sane fraction of the machine. (The estimate
// itself is parquetio's, tested there.)
func TestMemoryModel(t *testing.T) {
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
