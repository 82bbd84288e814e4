package fileio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// createTemp is os.CreateTemp; tests replace it to simulate failures.
var createTemp = os.CreateTemp

// ErrOutputPath marks an output path that cannot be written as asked: its
// directory is missing or not a directory, the path itself names a
// directory, a device, a pipe or a socket, or it is one of the run's
// inputs. The command line is at fault, not the data or the system.
var ErrOutputPath = errors.New("unusable output path")

// pathError is an [ErrOutputPath] error with its own message; it also
// unwraps to the operating system's error, when there is one.
type pathError struct {
	msg string
	err error
}

func (e *pathError) Error() string   { return e.msg }
func (e *pathError) Unwrap() []error { return []error{ErrOutputPath, e.err} }

func pathErrorf(err error, format string, args ...any) error {
	return &pathError{msg: fmt.Sprintf(format, args...), err: err}
}

// kindOf names a file mode that is not a regular file.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// File is an output file that appears at its destination only when
// committed. It is not safe for concurrent use.
type File struct {
	f    *os.File
	path string
	tmp  string
	done bool
}

// CreateAtomic creates a temporary file beside path. Write to it, then call
// [File.Commit] to move it to path, or [File.Abort] to discard it. A deferred
// Abort after a successful Commit does nothing, so
//
//	f, err := fileio.CreateAtomic(path)
//	if err != nil {
//		return err
//	}
//	defer f.Abort()
//	... write ...
//	return f.Commit()
//
// is the intended use.
func CreateAtomic(path string) (*File, error) {
	if err := CheckOutput(path); err != nil {
		return nil, err
	}
	dir, name := filepath.Dir(path), filepath.Base(path)
	f, err := createTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("fileio: cannot write %s: %w", path, err)
	}
	// CreateTemp makes the file private (0600); an output is an ordinary file.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("fileio: cannot write %s: %w", path, err)
	}
	return &File{f: f, path: path, tmp: f.Name()}, nil
}

// CheckOutput reports whether path can be written by [CreateAtomic]: its
// directory exists, and the path is free or names a regular file. Commands
// call it before their work, so a bad output path is refused at once.
func CheckOutput(path string) error {
	if path == "" {
		return pathErrorf(nil, "fileio: empty output path")
	}
	dir, name := filepath.Dir(path), filepath.Base(path)
	if strings.HasSuffix(path, string(filepath.Separator)) || name == "." || name == ".." {
		return pathErrorf(nil, "fileio: cannot write %s: the path names a directory", path)
	}
	st, err := os.Stat(dir)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the message names the directory itself
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return pathErrorf(err, "fileio: cannot write %s: directory %s does not exist: %v", path, dir, err)
	case err != nil:
		return fmt.Errorf("fileio: cannot write %s: directory %s: %w", path, dir, err)
	case !st.IsDir():
		return pathErrorf(nil, "fileio: cannot write %s: %s is not a directory", path, dir)
	}
	// Renaming over anything but a regular file would replace it: a
	// directory, a device such as /dev/full, a FIFO another program reads.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return pathErrorf(nil, "fileio: cannot write %s: it is %s; outputs replace only regular files, so name a new file", path, kindOf(st.Mode()))
	}
	return nil
}

// checkOutputDir reports whether path can serve as an output directory: it
// is free (the command creates it) or names a directory. Anything else (a
// regular file, a device, a FIFO) is an [ErrOutputPath] error.
func checkOutputDir(path string) error {
	if path == "" {
		return pathErrorf(nil, "fileio: empty output directory")
	}
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		kind := "a regular file"
		if !st.Mode().IsRegular() {
			kind = kindOf(st.Mode())
		}
		return pathErrorf(nil, "fileio: cannot write into %s: it is %s, not a directory; name a new directory", path, kind)
	}
	return nil
}

// Write writes to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, fmt.Errorf("fileio: write to %s after commit or abort", f.path)
	}
	return f.f.Write(p)
}

// Path returns the destination path.
func (f *File) Path() string { return f.path }

// TempName returns the name of the temporary file.
func (f *File) TempName() string { return f.tmp }

// Commit makes the written data appear at the destination path: it syncs and
// closes the temporary file, renames it over the destination and syncs the
// directory. On error the temporary file is removed and the destination is
// left as it was (unless only the final directory sync failed, in which case
// the new file is in place but may not be durable).
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("fileio: %s already committed or aborted", f.path)
	}
	f.done = true
	if err := f.f.Sync(); err != nil {
		f.f.Close()
		os.Remove(f.tmp)
		return fmt.Errorf("fileio: cannot write %s: sync: %w", f.path, err)
	}
	if err := f.f.Close(); err != nil {
		os.Remove(f.tmp)
		return fmt.Errorf("fileio: cannot write %s: close: %w", f.path, err)
	}
	if err := os.Rename(f.tmp, f.path); err != nil {
		os.Remove(f.tmp)
		return fmt.Errorf("fileio: cannot write %s: %w", f.path, err)
	}
	if err := syncDir(filepath.Dir(f.path)); err != nil {
		return fmt.Errorf("fileio: wrote %s but could not sync its directory: %w", f.path, err)
	}
	return nil
}

// Abort discards the temporary file. It does nothing after Commit or an
// earlier Abort.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	cerr := f.f.Close()
	rerr := os.Remove(f.tmp)
	if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		return fmt.Errorf("fileio: cannot remove temporary file %s: %w", f.tmp, rerr)
	}
	if cerr != nil && !errors.Is(cerr, os.ErrClosed) {
		return fmt.Errorf("fileio: cannot close temporary file %s: %w", f.tmp, cerr)
	}
	return nil
}

// WriteAtomic writes path atomically: fn writes the content, and the file
// appears at path only if fn returns nil and the data reached the disk. When
// fn fails, its error is returned unchanged and nothing is left behind.
func WriteAtomic(path string, fn func(w io.Writer) error) error {
	f, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := fn(f); err != nil {
		return err
	}
	return f.Commit()
}

// syncDir fsyncs a directory so that a rename in it is durable. File systems
// that cannot sync directories are not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	cerr := d.Close()
	if err != nil && (errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) || errors.Is(err, os.ErrInvalid)) {
		err = nil
	}
	if err != nil {
		return err
	}
	return cerr
}
