package fileio

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// Named is a path a run reads or writes and how a message names it (a
// setting, or a setting with the path: "--policy", "DATA a.parquet").
type Named struct{ Name, Path string }

// CheckPlanned reports whether path can serve as an output before the run
// creates the directories its outputs need: a directory (dir) must be
// free or a directory (anything else is an [ErrOutputPath] error), a file
// is checked with [CheckOutput] once its directory exists. A missing
// directory is created later ([Dirs.Prepare]); until then nothing is there
// to replace.
func CheckPlanned(path string, dir bool) error {
	if dir {
		return checkOutputDir(path)
	}
	if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return CheckOutput(path)
}

// CheckNotInputs refuses an output file that is one of inputs: writing it
// would replace an input, and inputs are never modified. It compares
// files, not names, so links and other spellings of a path are caught
// too. The error is an [ErrOutputPath] whose message names both as the
// caller does.
func CheckNotInputs(outputs, inputs []Named) error {
	for _, out := range outputs {
		o, err := os.Stat(out.Path)
		if err != nil || !o.Mode().IsRegular() {
			continue
		}
		for _, in := range inputs {
			fi, err := os.Stat(in.Path)
			if err == nil && fi.Mode().IsRegular() && os.SameFile(o, fi) {
				return pathErrorf(nil, "%s is also an input (%s): inputs are never modified; write the output to a new file", out.Name, in.Name)
			}
		}
	}
	return nil
}

// Dirs are the directories a run creates for its outputs, kept so that a
// run that fails can remove them again ([Dirs.RemoveCreated]). The zero
// value is ready to use; it is safe for concurrent use.
type Dirs struct {
	mu      sync.Mutex
	created []string
}

// MkdirAll creates the output directory dir and its missing parents, and
// records those it creates. A path through something that is not a
// directory, or a directory that cannot be created, is an
// [ErrOutputPath].
func (d *Dirs) MkdirAll(dir string) error {
	var missing []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return pathErrorf(nil, "output directory %s: %s is not a directory", dir, p)
			}
			break
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return pathErrorf(err, "output directory %s: %v", dir, err)
	}
	d.mu.Lock()
	d.created = append(d.created, missing...)
	d.mu.Unlock()
	return nil
}

// Prepare creates the directory of the output file path ([Dirs.MkdirAll])
// and checks that path can be written ([CheckOutput]).
func (d *Dirs) Prepare(path string) error {
	if path == "" {
		return pathErrorf(nil, "no output path given")
	}
	if err := d.MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	return CheckOutput(path)
}

// RemoveCreated removes the directories created that are empty, the
// deepest first; a directory holding anything is left alone.
func (d *Dirs) RemoveCreated() {
	d.mu.Lock()
	defer d.mu.Unlock()
	sort.Slice(d.created, func(i, j int) bool { return len(d.created[i]) > len(d.created[j]) })
	for _, p := range d.created {
		os.Remove(p)
	}
	d.created = nil
}
