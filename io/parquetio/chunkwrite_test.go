package parquetio_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// chunkTable is a small table with string sites and actions, episodes of
// lengths 1..3 and two state columns.
func chunkTable(t *testing.T) *traj.Table {
	t.Helper()
	c := &traj.Chunk{W: 2}
	for _, site := range []string{"north", "south", "east"} {
		for tr := range 5 {
			for h := 1; h <= 1+tr%3; h++ {
				c.SiteStr = append(c.SiteStr, site)
				c.TrajInt = append(c.TrajInt, int64(10+tr))
				c.Step = append(c.Step, int64(h))
				c.ActionStr = append(c.ActionStr, []string{"drug", "none", "surgery"}[(tr+h)%3])
				c.Reward = append(c.Reward, float64((tr+h)%4)/4)
				c.State = append(c.State, float64(1+tr%2), float64(h))
			}
		}
	}
	path := filepath.Join(t.TempDir(), "t.parquet")
	if err := parquetio.WriteChunks(path, []*traj.Chunk{c}, parquetio.WriteOptions{StateColumns: []string{"s1", "s2"}}); err != nil {
		t.Fatal(err)
	}
	tb, err := parquetio.Read(context.Background(), []string{path}, stateOpts("s1", "s2"))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// A table's rows, shuffled and split across files (and row groups), read
// back as the same table.
func TestWriteChunksShuffledSplit(t *testing.T) {
	want := chunkTable(t)
	all, err := want.Chunk(false)
	if err != nil {
		t.Fatal(err)
	}
	if all.Len() != want.Rows {
		t.Fatalf("Chunk has %d rows, want %d", all.Len(), want.Rows)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	perm := rng.Perm(all.Len())
	var paths []string
	for f, cut := range [][2]int{{0, 7}, {7, 20}, {20, all.Len()}} {
		part := perm[cut[0]:cut[1]]
		// Two row groups per file.
		half := len(part) / 2
		chunks := []*traj.Chunk{all.Select(part[:half]), all.Select(part[half:])}
		path := filepath.Join(dir, []string{"b.parquet", "c.parquet", "a.parquet"}[f])
		if err := parquetio.WriteChunks(path, chunks, parquetio.WriteOptions{StateColumns: []string{"s1", "s2"}}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	got, err := parquetio.Read(context.Background(), []string{paths[1], paths[2], paths[0]}, stateOpts("s1", "s2"))
	if err != nil {
		t.Fatal(err)
	}
	got.Sources, want.Sources = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("shuffled and split rows read back differently:\n got %+v\nwant %+v", got, want)
	}
}

// WriteChunks writes what it is given, including values Read rejects, and
// refuses chunks whose shapes disagree.
func TestWriteChunksErrors(t *testing.T) {
	dir := t.TempDir()
	ok := &traj.Chunk{SiteInt: []int64{1}, TrajInt: []int64{1}, Step: []int64{0}, ActionInt: []int64{0}, Reward: []float64{2}, State: []float64{1}, W: 1}
	opts := parquetio.WriteOptions{StateColumns: []string{"s1"}}
	if err := parquetio.WriteChunks(filepath.Join(dir, "bad-values.parquet"), []*traj.Chunk{ok}, opts); err != nil {
		t.Fatalf("bad values must be written as given: %v", err)
	}
	for name, chunks := range map[string][]*traj.Chunk{
		"none":          nil,
		"short reward":  {{SiteInt: []int64{1}, TrajInt: []int64{1}, Step: []int64{1}, ActionInt: []int64{0}, Reward: []float64{}, State: []float64{1}, W: 1}},
		"kinds differ":  {ok, {SiteStr: []string{"a"}, TrajInt: []int64{1}, Step: []int64{1}, ActionInt: []int64{0}, Reward: []float64{1}, State: []float64{1}, W: 1}},
		"width differs": {{SiteInt: []int64{1}, TrajInt: []int64{1}, Step: []int64{1}, ActionInt: []int64{0}, Reward: []float64{1}, State: []float64{1, 2}, W: 2}},
	} {
		path := filepath.Join(dir, "x.parquet")
		if err := parquetio.WriteChunks(path, chunks, opts); err == nil {
			t.Errorf("%s: got no error", name)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "*x.parquet*")); len(m) > 0 {
			t.Errorf("%s: a failed write left %v", name, m)
		}
	}
}
