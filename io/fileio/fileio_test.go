package fileio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestRefusesSpecialFiles pins that an output path naming a FIFO, a
// character device or a directory is refused before anything is written,
// and that the special file is still there afterwards.
func TestRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	cases := map[string]string{fifo: "named pipe", dir: "directory"}
	// A character device like /dev/full (1, 7) can be made only as root.
	dev := filepath.Join(dir, "full")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|7); err == nil {
		cases[dev] = "character device"
	} else {
		t.Logf("mknod %s: %v; the device case is not run", dev, err)
	}
	for path, kind := range cases {
		before, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		err = WriteAtomic(path, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err })
		if err == nil || !errors.Is(err, ErrOutputPath) || !strings.Contains(err.Error(), kind) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %v, want an ErrOutputPath naming the path and %q", path, err, kind)
		}
		after, err := os.Lstat(path)
		if err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s: mode %v before, %v after (err %v): the special file was replaced", path, before.Mode(), after.Mode(), err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestMissingDirectoryIsOutputPathError(t *testing.T) {
	err := WriteAtomic(filepath.Join(t.TempDir(), "no", "out.txt"), func(io.Writer) error { return nil })
	if !errors.Is(err, ErrOutputPath) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want an ErrOutputPath that is also fs.ErrNotExist", err)
	}
}
