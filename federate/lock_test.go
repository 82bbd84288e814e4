package federate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestLock: of many steps that lock one job at once exactly one gets the
// lock; the others are refused with one line that names the lock file and
// says how to remove a stale one; unlocking frees the job again.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, JobFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	unlocks := make([]func(), n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlocks[i], errs[i] = lock(dir)
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		if err == nil {
			if won >= 0 {
				t.Fatalf("steps %d and %d both hold the lock", won, i)
			}
			won = i
			continue
		}
		lock := filepath.Join(dir, LockFile)
		msg := err.Error()
		if !errors.Is(err, ErrRefused) || strings.Contains(msg, "\n") || !strings.Contains(msg, lock) || !strings.Contains(msg, "rm "+lock) {
			t.Fatalf("refusal %q", msg)
		}
	}
	if won < 0 {
		t.Fatal("no step got the lock")
	}
	// Once written, the lock names its holder.
	if _, err := lock(dir); err == nil || !strings.Contains(err.Error(), "pid ") {
		t.Fatalf("held lock: %v", err)
	}
	unlocks[won]()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); !os.IsNotExist(err) {
		t.Fatalf("the lock outlived its step: %v", err)
	}
	unlock, err := lock(dir)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock()
	if _, err := lock(filepath.Join(dir, "none")); err == nil || errors.Is(err, ErrRefused) {
		t.Fatalf("no job: %v", err)
	}
}
