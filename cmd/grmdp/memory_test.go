package main

import (
	"path/filepath"
	"testing"
)

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
