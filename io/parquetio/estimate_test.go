package parquetio_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// twoFiles writes 3 + 5 rows with a list state of length 4 into dir/a and
// dir/b.
func twoFiles(t testing.TB, dir string) {
	t.Helper()
	mk := func(n int) *traj.Chunk {
		c := &traj.Chunk{W: 4}
		for i := range n {
			c.SiteInt = append(c.SiteInt, 1)
			c.TrajInt = append(c.TrajInt, int64(i))
			c.Step = append(c.Step, 1)
			c.ActionInt = append(c.ActionInt, 0)
			c.Reward = append(c.Reward, 0.5)
			c.State = append(c.State, 0.5, 0.5, 1, 0)
		}
		return c
	}
	opts := parquetio.WriteOptions{StateColumns: []string{"phi"}, List: true}
	if err := parquetio.WriteChunks(filepath.Join(dir, "a.parquet"), []*traj.Chunk{mk(3)}, opts); err != nil {
		t.Fatal(err)
	}
	// Two row groups in b.
	if err := parquetio.WriteChunks(filepath.Join(dir, "b.parquet"), []*traj.Chunk{mk(2), mk(3)}, opts); err != nil {
		t.Fatal(err)
	}
}

func TestCountRows(t *testing.T) {
	dir := t.TempDir()
	twoFiles(t, dir)
	for _, tc := range []struct {
		paths []string
		want  int64
	}{
		{[]string{filepath.Join(dir, "a.parquet")}, 3},
		{[]string{dir}, 8},
		{[]string{filepath.Join(dir, "*.parquet")}, 8},
		{[]string{filepath.Join(dir, "b.parquet"), dir}, 8}, // a file named twice counts once
	} {
		got, err := parquetio.CountRows(tc.paths)
		if err != nil || got != tc.want {
			t.Errorf("CountRows(%v) = %d, %v; want %d", tc.paths, got, err, tc.want)
		}
	}
	fp, err := parquetio.Measure([]string{dir}, "phi")
	want := parquetio.Footprint{Files: 2, RowGroups: 3, Rows: 8, MaxRowGroupRows: 3, Values: 32}
	if err != nil || fp != want {
		t.Errorf("Measure(phi) = %+v, %v; want %+v", fp, err, want)
	}
	if fp, _ := parquetio.Measure([]string{dir}, "nope"); fp.Values != 0 {
		t.Errorf("Measure of a missing column counts %d values, want 0", fp.Values)
	}
	text := filepath.Join(dir, "text.parquet")
	if err := os.WriteFile(text, []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := parquetio.CountRows([]string{text}); !errors.Is(err, parquetio.ErrParquet) {
		t.Errorf("CountRows of a text file: %v, want ErrParquet", err)
	}
	if _, err := parquetio.CountRows([]string{filepath.Join(dir, "absent.parquet")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CountRows of a missing file: %v, want ErrNotExist", err)
	}
}

// CheckActions names the first value outside a policy's action set.
func TestCheckActions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.parquet")
	c := &traj.Chunk{SiteInt: []int64{1, 1, 1}, TrajInt: []int64{1, 2, 3}, Step: []int64{1, 1, 1},
		ActionStr: []string{"a", "b", "c"}, Reward: []float64{0, 0, 0}, State: []float64{1, 1, 1}, W: 1}
	if err := parquetio.WriteChunks(path, []*traj.Chunk{c}, parquetio.WriteOptions{StateColumns: []string{"s1"}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := parquetio.CheckActions(ctx, []string{path}, traj.Options{ActionLabels: []string{"a", "b", "c", "d"}}); err != nil {
		t.Errorf("labels a superset of the data's: %v", err)
	}
	err := parquetio.CheckActions(ctx, []string{path}, traj.Options{ActionLabels: []string{"a", "b"}})
	var re *traj.RowError
	if !errors.As(err, &re) || re.Row != 2 || re.Column != "action" || !errors.Is(err, parquetio.ErrBadData) {
		t.Errorf("unknown label: got %v, want a RowError at row 2, column action", err)
	}
	if err := parquetio.CheckActions(ctx, []string{path}, traj.Options{Actions: 3}); !errors.Is(err, parquetio.ErrSchema) {
		t.Errorf("labels for an integer policy: got %v, want ErrSchema", err)
	}
	if err := parquetio.CheckActions(ctx, []string{path}, traj.Options{Columns: traj.Columns{Action: "other"}, Actions: 3}); err != nil {
		t.Errorf("no action column: %v, want nil", err)
	}
}

func ExampleCountRows() {
	dir, err := os.MkdirTemp("", "count")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	c := &traj.Chunk{SiteStr: []string{"a", "a"}, TrajInt: []int64{7, 7}, Step: []int64{1, 2},
		ActionInt: []int64{0, 1}, Reward: []float64{0.5, 1}, State: []float64{1, 2}, W: 1}
	path := filepath.Join(dir, "d.parquet")
	if err := parquetio.WriteChunks(path, []*traj.Chunk{c}, parquetio.WriteOptions{StateColumns: []string{"s1"}}); err != nil {
		log.Fatal(err)
	}
	n, err := parquetio.CountRows([]string{dir})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "rows")
	// Output: 2 rows
}

// The estimate grows with rows and state width, the calibration points of
// the model lie below it, and row groups decoded ahead count beyond the
// four of the calibration.
func TestMemoryModel(t *testing.T) {
	base := parquetio.EstimateMemory(0, 3, false)
	if a, b := parquetio.EstimateMemory(1e6, 3, false), parquetio.EstimateMemory(4e6, 3, false); !(b > a && a > base) {
		t.Errorf("estimate does not grow with rows: %d, %d", a, b)
	}
	if a, b := parquetio.EstimateMemory(1e6, 3, false), parquetio.EstimateMemory(1e6, 12, false); !(b > a) {
		t.Errorf("estimate does not grow with width: %d, %d", a, b)
	}
	// The calibration points of estimate.go lie below the estimate.
	for _, p := range []struct {
		rows int64
		w    int
		list bool
		mib  float64
	}{{1e6, 1, false, 102}, {4e6, 1, false, 264}, {1e6, 3, false, 104}, {4e6, 3, false, 279},
		{1e6, 12, false, 221}, {4e6, 12, false, 624}, {1e6, 40, true, 698}, {4e6, 40, true, 2297}} {
		if got := float64(parquetio.EstimateMemory(p.rows, p.w, p.list)) / (1 << 20); got < p.mib {
			t.Errorf("%d rows, width %d: estimate %.0f MiB is below the measured %.0f MiB", p.rows, p.w, got, p.mib)
		}
	}
	// The paths that hold the rows twice need more.
	if a, b := parquetio.EstimateMemory(1e6, 3, false), parquetio.EstimateMemoryHeldTwice(1e6, 3, false); !(b > a) {
		t.Errorf("held twice %d is not above %d", b, a)
	}
	fp := parquetio.Footprint{RowGroups: 100, MaxRowGroupRows: 1 << 20}
	if got := fp.InflightMemory(2, 3); got != 0 {
		t.Errorf("2 workers: %d bytes in flight beyond the calibration, want 0", got)
	}
	// 64 workers keep 100 row groups in flight, 96 beyond the four, each
	// 2^20 rows of 80 + 16*3 bytes.
	if got, want := fp.InflightMemory(64, 3), int64(96)*(1<<20)*128; got != want {
		t.Errorf("64 workers, 100 row groups: %d bytes in flight, want %d", got, want)
	}
}
