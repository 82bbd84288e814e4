package parquetio_test

import (
	"bytes"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// seqOf yields the chunks one at a time, each a fresh copy made only when
// asked for, as a streaming writer's caller would.
func seqOf(chunks []*traj.Chunk) iter.Seq2[*traj.Chunk, error] {
	return func(yield func(*traj.Chunk, error) bool) {
		for _, c := range chunks {
			idx := make([]int, c.Len())
			for i := range idx {
				idx[i] = i
			}
			if !yield(c.Select(idx), nil) {
				return
			}
		}
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWriteChunksSeqSameBytes: WriteChunksSeq writes exactly the bytes
// WriteChunks writes for the same chunks: chunks of several sizes split
// into row groups, empty chunks among them, a lone empty chunk (a schema
// and no rows) and only empty chunks.
func TestWriteChunksSeqSameBytes(t *testing.T) {
	tb := chunkTable(t)
	all, err := tb.Chunk(false)
	if err != nil {
		t.Fatal(err)
	}
	empty := all.Select(nil)
	pick := func(lo, hi int) *traj.Chunk {
		idx := make([]int, hi-lo)
		for i := range idx {
			idx[i] = lo + i
		}
		return all.Select(idx)
	}
	n := all.Len()
	cases := map[string][]*traj.Chunk{
		"one":            {all},
		"several":        {pick(0, 5), pick(5, 6), pick(6, n)},
		"empty between":  {empty, pick(0, 9), empty, pick(9, n), empty},
		"only empty":     {empty},
		"several empty":  {empty, empty},
		"reversed parts": {pick(n/2, n), pick(0, n/2)},
	}
	dir := t.TempDir()
	for name, chunks := range cases {
		for _, rg := range []int{0, 4} {
			wo := parquetio.WriteOptions{StateColumns: []string{"s1", "s2"}, RowGroupRows: rg}
			a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
			if err := parquetio.WriteChunks(a, chunks, wo); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := parquetio.WriteChunksSeq(b, seqOf(chunks), wo); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !bytes.Equal(readBytes(t, a), readBytes(t, b)) {
				t.Errorf("%s, row groups of %d: WriteChunksSeq wrote other bytes than WriteChunks", name, rg)
			}
		}
	}
}

// TestStepChunk: each step's StepChunk holds Chunk's rows at that step, and
// writing them one per step (as grmdp prepare does) gives the bytes of
// writing Chunk's rows selected step by step.
func TestStepChunk(t *testing.T) {
	for _, intSites := range []bool{false, true} {
		tb := chunkTable(t)
		if intSites {
			tb.Sites = []string{"-3", "7", "12"}
		}
		all, err := tb.Chunk(intSites)
		if err != nil {
			t.Fatal(err)
		}
		var selected []*traj.Chunk
		row := 0
		for h := 1; h <= tb.H; h++ {
			n := tb.Steps[h-1].Len()
			idx := make([]int, n)
			for j := range idx {
				idx[j] = row + j
			}
			row += n
			want := all.Select(idx)
			got, err := tb.StepChunk(h, intSites)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("StepChunk(%d, %v):\n got %+v\nwant %+v", h, intSites, got, want)
			}
			selected = append(selected, want)
		}
		wo := parquetio.WriteOptions{StateColumns: []string{"s1", "s2"}, RowGroupRows: 3}
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
		if err := parquetio.WriteChunks(a, selected, wo); err != nil {
			t.Fatal(err)
		}
		steps := func(yield func(*traj.Chunk, error) bool) {
			for h := 1; h <= tb.H; h++ {
				if !yield(tb.StepChunk(h, intSites)) {
					return
				}
			}
		}
		if err := parquetio.WriteChunksSeq(b, steps, wo); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(readBytes(t, a), readBytes(t, b)) {
			t.Error("step chunks written in sequence differ from Chunk's rows selected by step")
		}
	}
	tb := chunkTable(t)
	for _, h := range []int{0, tb.H + 1} {
		if _, err := tb.StepChunk(h, false); err == nil {
			t.Errorf("StepChunk(%d): got no error", h)
		}
	}
}

// TestWriteChunksSeqFailure: an error from the sequence, or a chunk that
// cannot be written, after chunks were written, stops the iteration and
// leaves nothing (no output, no temporary file, an existing output
// untouched); the sequence's own error is returned as it is.
func TestWriteChunksSeqFailure(t *testing.T) {
	tb := chunkTable(t)
	all, err := tb.Chunk(false)
	if err != nil {
		t.Fatal(err)
	}
	wo := parquetio.WriteOptions{StateColumns: []string{"s1", "s2"}, RowGroupRows: 4}
	boom := errors.New("boom")
	other := all.Select([]int{0, 1})
	other.SiteInt, other.SiteStr = []int64{1, 2}, nil
	for name, tc := range map[string]struct {
		tail    func() (*traj.Chunk, error) // yielded after two good chunks
		wantErr error
	}{
		"sequence error": {func() (*traj.Chunk, error) { return nil, boom }, boom},
		"other kinds":    {func() (*traj.Chunk, error) { return other, nil }, nil},
		"nil chunk":      {func() (*traj.Chunk, error) { return nil, nil }, nil},
		"short rewards": {func() (*traj.Chunk, error) {
			c := all.Select([]int{0, 1, 2})
			c.Reward = c.Reward[:2]
			return c, nil
		}, nil},
	} {
		for _, existing := range []bool{false, true} {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.parquet")
			if existing {
				if err := os.WriteFile(path, []byte("keep me"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			calls, stopped := 0, false
			seq := func(yield func(*traj.Chunk, error) bool) {
				for _, c := range []*traj.Chunk{all.Select([]int{0, 1, 2}), all.Select([]int{3, 4, 5, 6, 7})} {
					calls++
					if !yield(c, nil) {
						return
					}
				}
				calls++
				if !yield(tc.tail()) {
					stopped = true
					return
				}
				calls++
				yield(all, nil)
			}
			err := parquetio.WriteChunksSeq(path, seq, wo)
			switch {
			case err == nil:
				t.Errorf("%s: got no error", name)
			case tc.wantErr != nil && err != tc.wantErr:
				t.Errorf("%s: got %v, want the sequence's error as it is", name, err)
			}
			if !stopped || calls != 3 {
				t.Errorf("%s: the writer went on iterating after the failure (%d calls)", name, calls)
			}
			var left []string
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				left = append(left, e.Name())
			}
			want := []string{}
			if existing {
				want = []string{"out.parquet"}
				if b := readBytes(t, path); string(b) != "keep me" {
					t.Errorf("%s: the existing output was changed", name)
				}
			}
			if !slices.Equal(append([]string{}, left...), want) {
				t.Errorf("%s: the failed write left %v, want %v", name, left, want)
			}
		}
	}
	// No chunks at all: no column types, and nothing written.
	dir := t.TempDir()
	if err := parquetio.WriteChunksSeq(filepath.Join(dir, "none.parquet"), seqOf(nil), wo); err == nil {
		t.Error("no chunks: got no error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("no chunks: left %v", entries)
	}
}

// TestWriteChunksSameBytes: writing the same chunks again gives the same
// bytes also when a column's values are too many for a dictionary page,
// where arrow-go would fall back from dictionary to plain encoding in the
// middle of a column chunk and record the two encodings' page counts in
// random order (it ranges over a map).
func TestWriteChunksSameBytes(t *testing.T) {
	const n = 300_000 // distinct int64 and double values: over 1 MiB each
	c := &traj.Chunk{W: 1}
	for i := range n {
		c.SiteInt = append(c.SiteInt, int64(i%3))
		c.TrajInt = append(c.TrajInt, int64(i))
		c.Step = append(c.Step, 1)
		c.ActionStr = append(c.ActionStr, []string{"a", "b"}[i%2])
		c.Reward = append(c.Reward, float64(i)/n)
		c.State = append(c.State, float64(i)*1.5)
	}
	dir := t.TempDir()
	wo := parquetio.WriteOptions{StateColumns: []string{"s1"}}
	var first []byte
	for i := range 8 {
		path := filepath.Join(dir, "d.parquet")
		var err error
		if i%2 == 0 {
			err = parquetio.WriteChunks(path, []*traj.Chunk{c}, wo)
		} else {
			err = parquetio.WriteChunksSeq(path, seqOf([]*traj.Chunk{c}), wo)
		}
		if err != nil {
			t.Fatal(err)
		}
		if b := readBytes(t, path); first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("write %d gave other bytes than the first", i)
		}
	}
}
