package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The outer command's --cpuprofile and --timings cover the whole of
// quickstart: each step runs once under them, not as a subcommand that
// starts them again.
func TestQuickstartOuterFlags(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.pprof")
	mustRun(t, "--cpuprofile", prof, "quickstart", "--dir", filepath.Join(dir, "q1"))
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("--cpuprofile wrote no profile: %v", err)
	}

	code, out, errOut := grmdp(t, "--timings", "quickstart", "--dir", filepath.Join(dir, "q2"))
	if code != 0 {
		t.Fatalf("--timings quickstart: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// One report for the whole run, naming phases of solve, eval and of
	// the last step, apply.
	if n := strings.Count(errOut, "timing: whole run"); n != 1 {
		t.Errorf("--timings quickstart reported %d runs, want 1:\n%s", n, errOut)
	}
	for _, phase := range []string{"solve: values", "evaluation and bootstrap", "read, recommend and write"} {
		if !strings.Contains(errOut, "timing: "+phase) {
			t.Errorf("--timings quickstart lacks the phase %q:\n%s", phase, errOut)
		}
	}
}
