package parquetio

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
)

// TestCorpusDecode runs the column decoders on every column of every file
// of the parquet-testing corpus that has a type the contract accepts, so
// the decoding path (not only the schema check) meets the corpus' corrupt
// pages, odd encodings and nulls. Each decode must end, within a time limit,
// in values or in an error wrapping ErrParquet or ErrBadData, and must not
// panic inside this package.
func TestCorpusDecode(t *testing.T) {
	const dir = "../../../shared/testdata/parquet-testing"
	var files []string
	for _, sub := range []string{"data", "bad_data"} {
		m, _ := filepath.Glob(filepath.Join(dir, sub, "*.parquet"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skipf("no parquet-testing corpus at %s", dir)
	}
	decoded, failed := 0, 0
	for _, path := range files {
		size, _, md, err := openFooter(path)
		if err != nil {
			continue
		}
		fi := &fileInfo{input: input{path: path}, size: size, md: md}
		root := md.Schema.Root()
		for f := range root.NumFields() {
			name := root.Field(f).Name()
			for _, w := range []want{wantNumber, wantIntOrString, wantFloatList} {
				c, err := resolveColumn(md.Schema, path, name, w, false)
				if err != nil {
					continue
				}
				done := make(chan error, 1)
				go func() { done <- decodeColumnForTest(fi, c, w) }()
				select {
				case err := <-done:
					if err != nil {
						if strings.Contains(err.Error(), "panic in parquetio") {
							t.Errorf("%s: column %q as %v: %v", path, name, w, err)
						}
						if !errors.Is(err, ErrParquet) && !errors.Is(err, ErrBadData) {
							t.Errorf("%s: column %q: error %v wraps neither ErrParquet nor ErrBadData", path, name, err)
						}
						failed++
						if testing.Verbose() {
							t.Logf("%s", err)
						}
					} else {
						decoded++
					}
				case <-time.After(30 * time.Second):
					t.Fatalf("%s: column %q: decoding did not end within 30s", path, name)
				}
			}
		}
	}
	t.Logf("%d column decodes succeeded, %d ended in clean errors", decoded, failed)
	if decoded == 0 {
		t.Errorf("no column of the corpus decoded: the test exercises nothing")
	}
}

func usesDelta(fi *fileInfo, c *colSpec) bool {
	for rg := range fi.md.NumRowGroups() {
		cc, err := fi.md.RowGroup(rg).ColumnChunk(c.leaf)
		if err != nil {
			continue
		}
		for _, e := range cc.Encodings() {
			switch e {
			case parquet.Encodings.DeltaBinaryPacked, parquet.Encodings.DeltaByteArray, parquet.Encodings.DeltaLengthByteArray:
				return true
			}
		}
	}
	return false
}

// decodeColumnForTest decodes one column in every row group, as a task of
// Read does, but reports panics raised in this package distinctly.
func decodeColumnForTest(fi *fileInfo, c *colSpec, w want) (err error) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer func() {
		// arrow-go v18.8.0's DELTA_* decoders never release a 64-byte
		// buffer (deltaBitWidths in internal/encoding/delta_bit_packing.go);
		// with the Go allocator the GC reclaims it. Any other leak is ours.
		if n := mem.CurrentAlloc(); n != 0 && err == nil && !usesDelta(fi, c) {
			err = fmt.Errorf("panic in parquetio: %d bytes of arrow memory not released", n)
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			stack := string(debug.Stack())
			if strings.Contains(stack, "io/parquetio.(*decoder)") && !strings.Contains(stack, "arrow-go") {
				err = fmt.Errorf("panic in parquetio: %v\n%s", r, stack)
				return
			}
			err = fileErr(fi.path, "cannot decode: %v", r)
		}
	}()
	fr, err := openReader(fi, readerProps(mem))
	if err != nil {
		return err
	}
	defer fr.Close()
	d := &decoder{strs: map[string]string{}}
	var row0 int64
	for rg := range fi.md.NumRowGroups() {
		n := fi.md.RowGroup(rg).NumRows()
		loc := rgLoc{file: fi.path, rg: rg, row0: row0}
		row0 += n
		if n <= 0 {
			continue
		}
		r := fr.RowGroup(rg)
		ctx := context.Background()
		switch {
		case w == wantFloatList:
			_, _, err = d.list(ctx, r, c, n, loc)
		case c.conv == convString:
			_, err = d.strings(ctx, r, c, n, loc, nil)
		case w == wantNumber:
			_, err = d.floats(ctx, r, c, n, loc, nil)
		default:
			_, err = d.ints(ctx, r, c, n, loc, nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
