package fileio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := WriteAtomic(path, func(w io.Writer) error {
		_, err := io.WriteString(w, "hello")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "hello" {
		t.Errorf("content: got %q, want %q", got, "hello")
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("directory: got %v, want only out.txt", names)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o044 == 0 {
		t.Errorf("mode: got %v, want group/other readable", st.Mode())
	}
}

func TestWriteAtomicFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteAtomic(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error: got %v, want %v", err, boom)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old" {
		t.Errorf("existing file: got %q, want it untouched (%q)", got, "old")
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("directory: got %v, want only out.txt", names)
	}
}

func TestCreateAtomicMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	path := filepath.Join(dir, "out.txt")
	_, err := CreateAtomic(path)
	if err == nil {
		t.Fatal("got no error, want one naming the missing directory")
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("error: got %q, want it to name %s and say it does not exist", err, dir)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error: got %v, want it to wrap os.ErrNotExist", err)
	}
}

func TestCreateAtomicOnDirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := CreateAtomic(dir); err == nil {
		t.Fatal("got no error writing over a directory")
	}
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	if _, err := CreateAtomic(filepath.Join(file, "x")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("error: got %v, want a 'not a directory' error", err)
	}
}

func TestCommitAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.bin")
	f, err := CreateAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(filepath.Base(f.TempName()), "a.bin") {
		t.Errorf("temp name %s does not embed the final name", f.TempName())
	}
	f.Write([]byte{1, 2, 3})
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if names := listDir(t, dir); len(names) != 0 {
		t.Errorf("after abort: got %v, want an empty directory", names)
	}
	if _, err := f.Write([]byte{1}); err == nil {
		t.Error("write after abort: got no error")
	}
	if err := f.Commit(); err == nil {
		t.Error("commit after abort: got no error")
	}

	f, err = CreateAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{4})
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := f.Abort(); err != nil {
		t.Errorf("abort after commit: got %v, want nil", err)
	}
	if got, _ := os.ReadFile(path); len(got) != 1 || got[0] != 4 {
		t.Errorf("content: got %v, want [4]", got)
	}
}

func TestCreateTempFailure(t *testing.T) {
	defer func(f func(string, string) (*os.File, error)) { createTemp = f }(createTemp)
	createTemp = func(string, string) (*os.File, error) { return nil, os.ErrPermission }
	path := filepath.Join(t.TempDir(), "x")
	err := WriteAtomic(path, func(io.Writer) error { return nil })
	if !errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), path) {
		t.Errorf("error: got %v, want a permission error naming %s", err, path)
	}
}
