package main

import (
	"crypto/sha256"
	"io"
	"os"
	"testing"
	"time"
)

// fileState is what "never modified" means for an input: its bytes and its
// modification time.
type fileState struct {
	sum   [sha256.Size]byte
	mtime time.Time
	size  int64
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	var s fileState
	copy(s.sum[:], h.Sum(nil))
	s.mtime, s.size = fi.ModTime(), fi.Size()
	return s
}

func checkUnchanged(t *testing.T, path string, before fileState) {
	t.Helper()
	if after := stateOf(t, path); after != before {
		t.Errorf("input %s changed: size %d -> %d, mtime %v -> %v, same bytes %v", path, before.size, after.size, before.mtime, after.mtime, after.sum == before.sum)
	}
}
