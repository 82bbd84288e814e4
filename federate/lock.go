package federate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LockFile is the name of the lock a step holds in its job directory while
// it folds a round, so that two steps never fold into one job at once.
const LockFile = "step.lock"

// lock takes the step lock of the job in dir: it creates dir/[LockFile]
// exclusively (O_EXCL, so of two steps started at once exactly one gets
// it), holding the process id, host and time. The returned function
// removes it. When the file exists, lock refuses ([ErrRefused]) with one
// line naming the file, the step that holds it, and how to remove a stale
// lock, and changes nothing.
func lock(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, LockFile)
	if _, err := os.Stat(filepath.Join(dir, JobFile)); err != nil {
		return nil, err // no job here: nothing to lock
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		holder := ""
		if b, err := os.ReadFile(path); err == nil {
			if s := strings.TrimSpace(string(b)); s != "" && !strings.Contains(s, "\n") {
				holder = " (" + s + ")"
			}
		}
		return nil, refusef("job %s is locked by another federate step%s: its lock %s exists; if no step is running on this job, remove the stale lock (rm %s) and run the step again",
			dir, holder, path, path)
	}
	if err != nil {
		return nil, fmt.Errorf("federate: cannot lock job %s: %w", dir, err)
	}
	host, _ := os.Hostname()
	_, werr := fmt.Fprintf(f, "pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return nil, fmt.Errorf("federate: cannot lock job %s: %w", dir, werr)
	}
	return func() { os.Remove(path) }, nil
}
