package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirsRemoveCreated(t *testing.T) {
	root := t.TempDir()
	var d Dirs
	out := filepath.Join(root, "a", "b", "policy.parquet")
	if err := d.Prepare(out); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Dir(out)); err != nil || !fi.IsDir() {
		t.Fatalf("Prepare did not create %s: %v", filepath.Dir(out), err)
	}
	keep := filepath.Join(root, "keep")
	if err := os.Mkdir(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.MkdirAll(keep); err != nil {
		t.Fatal(err)
	}
	d.RemoveCreated()
	if _, err := os.Stat(filepath.Join(root, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("created directory a still there: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("directory that existed before was removed: %v", err)
	}
}

func TestDirsThroughFile(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var d Dirs
	err := d.MkdirAll(filepath.Join(file, "sub"))
	if !errors.Is(err, ErrOutputPath) || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("got %v, want an ErrOutputPath naming the file", err)
	}
	if err := d.Prepare(""); !errors.Is(err, ErrOutputPath) {
		t.Errorf("empty path: got %v, want an ErrOutputPath", err)
	}
}

func TestCheckNotInputs(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "data.parquet")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link.parquet")
	if err := os.Link(in, link); err != nil {
		t.Skip(err)
	}
	inputs := []Named{{"DATA " + in, in}}
	err := CheckNotInputs([]Named{{"--output " + link, link}}, inputs)
	if !errors.Is(err, ErrOutputPath) || !strings.HasPrefix(err.Error(), "--output "+link+" is also an input (DATA "+in+")") {
		t.Errorf("got %v, want the output named as an input", err)
	}
	if err := CheckNotInputs([]Named{{"--output", filepath.Join(root, "new.parquet")}}, inputs); err != nil {
		t.Errorf("a new file: got %v", err)
	}
}

func TestCheckPlanned(t *testing.T) {
	root := t.TempDir()
	if err := CheckPlanned(filepath.Join(root, "missing", "p.parquet"), false); err != nil {
		t.Errorf("missing directory: got %v, want nil (created later)", err)
	}
	if err := CheckPlanned(root, false); !errors.Is(err, ErrOutputPath) {
		t.Errorf("a directory as a file: got %v", err)
	}
	file := filepath.Join(root, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckPlanned(file, true); !errors.Is(err, ErrOutputPath) {
		t.Errorf("a file as a directory: got %v", err)
	}
}
