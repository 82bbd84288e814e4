//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/federate"
)

// TestFederateStepLock: while JOB/step.lock exists (another step folding,
// or one that died), federate step refuses with exit code 3 and one line
// naming the lock file and how to remove a stale one, and the job is
// unchanged; once the lock is removed the same step folds the round, and
// it leaves no lock behind.
func TestFederateStepLock(t *testing.T) {
	dir := t.TempDir()
	names, dirs := fedSetup(t, dir)
	job := filepath.Join(dir, "job")
	mustRun(t, append([]string{"federate", "init", "--sites", strings.Join(names, ","), "-o", job}, settingsArgs("pooled", 5, 10)...)...)
	var msgs []string
	for k := range names {
		out := filepath.Join(dir, fmt.Sprintf("r0-%d.parquet", k))
		mustRun(t, "federate", "site", "--job", job, "--site", names[k], "-o", out, dirs[k])
		msgs = append(msgs, out)
	}
	lock := filepath.Join(job, federate.LockFile)
	if err := os.WriteFile(lock, []byte("pid 1 on elsewhere since 2026-01-01T00:00:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(job, federate.StateFile))
	code, _, errOut := grmdp(t, append([]string{"federate", "step", "--job", job}, msgs...)...)
	if code != exitBadData || strings.Count(strings.TrimSpace(errOut), "\n") != 0 ||
		!strings.Contains(errOut, lock) || !strings.Contains(errOut, "rm "+lock) || !strings.Contains(errOut, "pid 1 on elsewhere") {
		t.Fatalf("locked job: exit %d: %q", code, errOut)
	}
	after, _ := os.ReadFile(filepath.Join(job, federate.StateFile))
	if !bytes.Equal(before, after) {
		t.Fatal("a refused step changed the job's state")
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the refused step removed another's lock: %v", err)
	}
	os.Remove(lock)
	mustRun(t, append([]string{"federate", "step", "--job", job}, msgs...)...)
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("the step left its lock: %v", err)
	}
	_, s, err := federate.Load(job)
	if err != nil || s.Round != 1 {
		t.Fatalf("after the step: round %v, %v", s, err)
	}
}
