package parquetio

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// input is one Parquet file to read.
type input struct {
	path string
	// hive is the value of the last "<site column>=value" path component,
	// and hasHive says whether there is one.
	hive    string
	hasHive bool
}

// expandPaths turns files, directories and globs into the list of Parquet
// files to read, in order: arguments in the order given, the files of a
// directory (recursively) and the matches of a glob in lexical order. A file
// named twice is read once.
func expandPaths(paths []string, siteCol string) ([]input, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("parquetio: no input paths: %w", ErrNoData)
	}
	var out []input
	seen := map[string]bool{}
	add := func(p string) {
		key := p
		if abs, err := filepath.Abs(p); err == nil {
			key = abs
		}
		if seen[key] {
			return
		}
		seen[key] = true
		in := input{path: p}
		in.hive, in.hasHive = hiveValue(p, siteCol)
		out = append(out, in)
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && hasMeta(p) {
				matches, gerr := filepath.Glob(p)
				if gerr != nil {
					return nil, fmt.Errorf("parquetio: %s: bad glob pattern: %w", p, gerr)
				}
				if len(matches) == 0 {
					return nil, fmt.Errorf("%s: no files match the pattern: %w", p, ErrNoData)
				}
				for _, m := range matches {
					mst, err := os.Stat(m)
					if err != nil {
						return nil, ioErr(m, err)
					}
					if mst.IsDir() {
						files, err := walkDir(m)
						if err != nil {
							return nil, err
						}
						for _, f := range files {
							add(f)
						}
					} else {
						add(m)
					}
				}
				continue
			}
			return nil, ioErr(p, err)
		}
		if !st.IsDir() {
			add(p)
			continue
		}
		files, err := walkDir(p)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: the directory has no .parquet files: %w", p, ErrNoData)
		}
		for _, f := range files {
			add(f)
		}
	}
	return out, nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[`) }

// walkDir lists the *.parquet files below dir in lexical order of their
// paths, skipping hidden and underscore-prefixed names (.crc files,
// _SUCCESS, _delta_log), as Spark, pyarrow and DuckDB do.
func walkDir(dir string) ([]string, error) {
	var files []string
	err := walk(dir, func(p string, parquet bool) {
		if parquet {
			files = append(files, p)
		}
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}

// walk calls fn, in WalkDir's order, for each file below dir that is not
// hidden or underscore-prefixed, saying whether it is a .parquet file.
func walk(dir string, fn func(p string, parquet bool)) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return ioErr(p, err)
		}
		name := d.Name()
		if p != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			fn(p, strings.EqualFold(filepath.Ext(name), ".parquet"))
		}
		return nil
	})
}

// Skipped counts the files inside the directories of paths that a read
// leaves out because they are not .parquet (hidden and underscore-prefixed
// names aside, which a read skips without a word), and names the first. A
// directory without any Parquet file counts nothing: reading it is an
// error of its own.
func Skipped(paths []string) (n int, first string) {
	for _, arg := range paths {
		if fi, err := os.Stat(arg); err != nil || !fi.IsDir() {
			continue
		}
		parquet, others, example := 0, 0, ""
		walk(arg, func(p string, isParquet bool) {
			switch {
			case isParquet:
				parquet++
			case others == 0:
				example = p
				others++
			default:
				others++
			}
		})
		if parquet > 0 && others > 0 {
			if n == 0 {
				first = example
			}
			n += others
		}
	}
	return n, first
}

// hiveValue returns X from the last path component of the form col=X.
func hiveValue(p, col string) (string, bool) {
	dir := filepath.Dir(filepath.ToSlash(filepath.Clean(p)))
	parts := strings.Split(filepath.ToSlash(dir), "/")
	prefix := col + "="
	for i := len(parts) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(parts[i], prefix); ok {
			if u, err := url.PathUnescape(v); err == nil {
				v = u
			}
			return v, true
		}
	}
	return "", false
}

// hiveInts reports whether every hive site value is a canonical decimal
// integer, so that the sites sort numerically, as pyarrow and DuckDB infer.
func hiveInts(ins []input) bool {
	any := false
	for _, in := range ins {
		if !in.hasHive {
			continue
		}
		any = true
		v, err := strconv.ParseInt(in.hive, 10, 64)
		if err != nil || strconv.FormatInt(v, 10) != in.hive {
			return false
		}
	}
	return any
}
