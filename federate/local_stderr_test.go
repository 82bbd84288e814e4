package federate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A Local without Stdout and Stderr drops the parts' output and notes, on
// success and on failure.
func TestLocalNilWriters(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := &Local{Exe: script("ok", "echo out; echo note >&2\n")}
	if err := ok.part(context.Background(), []string{"federate", "step"}); err != nil {
		t.Errorf("a part that succeeds: %v", err)
	}
	failing := &Local{Exe: script("fail", "echo note >&2; echo 'grmdp: refused' >&2; exit 3\n")}
	var pe *PartError
	if err := failing.part(context.Background(), []string{"federate", "step"}); !errors.As(err, &pe) || pe.Code != 3 || pe.Msg != "refused" {
		t.Errorf("a part that fails: got %v, want a PartError, exit 3, \"refused\"", err)
	}
}
