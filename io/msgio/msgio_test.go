package msgio

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestRoundTrip writes vectors (an empty one, extreme values) and metadata
// and reads them back unchanged, bit for bit.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.parquet")
	vecs := []Vector{{"gram", 0, []float64{1, 0.5, math.SmallestNonzeroFloat64}}, {"rhs", 1, []float64{}}, {"rhs", 0, []float64{-0.0, math.MaxFloat64}}}
	meta := map[string]string{"k": `{"a": 1}`}
	if err := Write(path, meta, vecs); err != nil {
		t.Fatal(err)
	}
	gotMeta, got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotMeta, meta) {
		t.Errorf("meta %v, want %v", gotMeta, meta)
	}
	if len(got) != len(vecs) {
		t.Fatalf("%d vectors, want %d", len(got), len(vecs))
	}
	for i := range vecs {
		if got[i].Name != vecs[i].Name || got[i].Index != vecs[i].Index || len(got[i].Values) != len(vecs[i].Values) {
			t.Fatalf("vector %d: %+v, want %+v", i, got[i], vecs[i])
		}
		for j, v := range vecs[i].Values {
			if math.Float64bits(got[i].Values[j]) != math.Float64bits(v) {
				t.Fatalf("vector %d value %d: %v, want %v", i, j, got[i].Values[j], v)
			}
		}
	}
}

// TestTruncated refuses every prefix of a message file with ErrBadFile,
// never a panic.
func TestTruncated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.parquet")
	if err := Write(path, map[string]string{"k": "v"}, []Vector{{"gram", 0, []float64{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	cut := filepath.Join(dir, "cut.parquet")
	for n := 0; n < len(b); n += 7 {
		os.WriteFile(cut, b[:n], 0o644)
		if _, _, err := Read(cut); !errors.Is(err, ErrBadFile) {
			t.Fatalf("%d of %d bytes: %v, want ErrBadFile", n, len(b), err)
		}
	}
}
