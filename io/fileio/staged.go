package fileio

import (
	"fmt"
	"os"
	"path/filepath"
)

// Staged is a set of outputs written first to hidden temporary files
// beside their destinations and moved into place together once all are
// written, so that a run that fails half-way leaves none of them. The
// zero value is an empty set; call Abort (deferred) to remove what was
// not committed.
type Staged struct{ final, tmp []string }

// Add reserves a hidden temporary file beside path and returns its name,
// for the caller to write.
func (s *Staged) Add(path string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("cannot write %s: %w", path, err)
	}
	f.Close()
	s.final, s.tmp = append(s.final, path), append(s.tmp, f.Name())
	return f.Name(), nil
}

// Commit moves every staged file into place, in the order they were
// added.
func (s *Staged) Commit() error {
	for i, tmp := range s.tmp {
		if err := os.Rename(tmp, s.final[i]); err != nil {
			return fmt.Errorf("cannot write %s: %w", s.final[i], err)
		}
	}
	s.tmp = nil
	return nil
}

// Abort removes the staged files not yet committed.
func (s *Staged) Abort() {
	for _, tmp := range s.tmp {
		os.Remove(tmp)
	}
	s.tmp = nil
}
