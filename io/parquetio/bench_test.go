package parquetio

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/traj"
)

// Benchmark data: an action-block dataset of 1,000,000 rows (10 sites x
// 20,000 trajectories x 5 steps): site string, traj int64, step int32,
// action int32, reward double, s1..s3 double, in row groups of 2^17 rows
// (DuckDB's default is 122,880), written once per test binary run.
const (
	benchSites = 10
	benchTraj  = 20000
	benchH     = 5
	benchRows  = benchSites * benchTraj * benchH
)

var benchFile = sync.OnceValues(func() (string, error) {
	ch := &traj.Chunk{Src: traj.Origin{File: "bench"}, W: 3}
	for s := range benchSites {
		site := "hospital-" + strconv.Itoa(s)
		for tr := range benchTraj {
			for h := 1; h <= benchH; h++ {
				x := uint64(s*benchTraj+tr)*2654435761 + uint64(h)*40503
				ch.SiteStr = append(ch.SiteStr, site)
				ch.TrajInt = append(ch.TrajInt, int64(tr))
				ch.Step = append(ch.Step, int64(h))
				ch.ActionInt = append(ch.ActionInt, int64(x%3))
				ch.Reward = append(ch.Reward, float64(x%1000)/1000)
				ch.State = append(ch.State, float64(1+x%7), float64(x%5), float64((x>>8)%11))
			}
		}
	}
	b := traj.NewBuilder(traj.Options{State: traj.StateSpec{Columns: []string{"s1", "s2", "s3"}}})
	if err := b.Add(ch); err != nil {
		return "", err
	}
	tb, err := b.Build()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "parquetio-bench-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "bench.parquet")
	err = WriteTrajectories(path, tb, WriteOptions{StateColumns: []string{"s1", "s2", "s3"}, RowGroupRows: 1 << 17})
	return path, err
})

func benchSetup(b *testing.B) (string, int64) {
	path, err := benchFile()
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

var benchOpts = traj.Options{State: traj.StateSpec{Columns: []string{"s1", "s2", "s3"}}}

func workerCases() []int {
	if runtime.GOMAXPROCS(0) == 1 {
		return []int{1}
	}
	return []int{1, runtime.GOMAXPROCS(0)}
}

// BenchmarkRead measures Read end to end: decode, validate, sort, link.
func BenchmarkRead(b *testing.B) {
	path, size := benchSetup(b)
	for _, w := range workerCases() {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			opts := benchOpts
			opts.Workers = w
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				tb, err := Read(context.Background(), []string{path}, opts)
				if err != nil {
					b.Fatal(err)
				}
				if tb.Rows != benchRows {
					b.Fatalf("rows: got %d, want %d", tb.Rows, benchRows)
				}
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkDecodeOnly measures bare decoding of the same columns without
// the Builder: "lowlevel" is Read's own decode path (typed column chunk
// readers into Chunks), "pqarrow" is arrow-go's record reader with column
// projection, one row group per task. Both run row groups in parallel.
func BenchmarkDecodeOnly(b *testing.B) {
	path, size := benchSetup(b)
	for _, w := range workerCases() {
		b.Run(fmt.Sprintf("lowlevel/workers=%d", w), func(b *testing.B) {
			opts := benchOpts
			opts.Workers = w
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				cols := opts.Columns.WithDefaults()
				infos, hiveInt, err := openInputs(context.Background(), []string{path}, &opts, cols)
				if err != nil {
					b.Fatal(err)
				}
				tasks := planRowGroups(infos)
				props := readerProps(memory.DefaultAllocator)
				var rows int
				err = ordered(context.Background(), w, len(tasks),
					func(ctx context.Context, i int) (*traj.Chunk, error) {
						return decodeTask(ctx, tasks[i], props, hiveInt, false, nil)
					},
					func(i int, ch *traj.Chunk) error { rows += ch.Len(); return nil }, nil)
				if err != nil {
					b.Fatal(err)
				}
				if rows != benchRows {
					b.Fatalf("rows: got %d, want %d", rows, benchRows)
				}
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		b.Run(fmt.Sprintf("pqarrow/workers=%d", w), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if n := pqarrowScan(b, path, w); n != benchRows {
					b.Fatalf("rows: got %d, want %d", n, benchRows)
				}
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// pqarrowScan reads the contract columns of every row group with pqarrow,
// row groups in parallel, and returns the number of rows.
func pqarrowScan(b *testing.B, path string, w int) int64 {
	fr, err := file.OpenParquetFile(path, false)
	if err != nil {
		b.Fatal(err)
	}
	defer fr.Close()
	ar, err := pqarrow.NewFileReader(fr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	cols := make([]int, 8)
	for i := range cols {
		cols[i] = i
	}
	nrg := fr.NumRowGroups()
	counts := make([]int64, nrg)
	var g errgroup.Group
	g.SetLimit(w)
	for rg := range nrg {
		g.Go(func() error {
			rr, err := ar.GetRecordReader(context.Background(), cols, []int{rg})
			if err != nil {
				return err
			}
			defer rr.Release()
			for rr.Next() {
				rec := rr.RecordBatch()
				counts[rg] += rec.NumRows()
				_ = rec.Column(4).(*array.Float64).Float64Values()
			}
			return rr.Err()
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}
