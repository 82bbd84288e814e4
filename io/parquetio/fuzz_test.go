package parquetio_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
)

// FuzzRead feeds corrupted Parquet bytes to Read: it must return a table or
// an error wrapping one of the sentinels, and never panic or hang.
func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.parquet")
	r := sampleRows(anyInts(1, 2), 3, 3, 2)
	writeParquet(f, seed, 4, r.columns(i64, i64, i32, i32, f64, f64, "s1")...)
	data, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, 0, byte(0))
	f.Add(data, len(data)/2, byte(0xff))
	f.Add(data, 10, byte(7))
	f.Add(data, len(data)-20, byte(1))
	f.Fuzz(func(t *testing.T, data []byte, at int, b byte) {
		data = bytes.Clone(data)
		if len(data) > 0 {
			at = ((at % len(data)) + len(data)) % len(data)
			data[at] ^= b
		}
		path := filepath.Join(t.TempDir(), "f.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := parquetio.Read(context.Background(), []string{path}, stateOpts("s1"))
		if err != nil && !errors.Is(err, parquetio.ErrParquet) && !errors.Is(err, parquetio.ErrSchema) &&
			!errors.Is(err, parquetio.ErrBadData) && !errors.Is(err, parquetio.ErrNoData) {
			t.Errorf("error %v wraps no sentinel", err)
		}
	})
}
