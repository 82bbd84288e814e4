//go:build ignore

// gendata writes the benchmark datasets of docs/PERFORMANCE.md that
// `grmdp simulate` does not: rows shuffled across files, and large tabular
// and precomputed-feature tables.
//
//	go run scripts/gendata.go shuffle IN.parquet OUTDIR FILES SEED
//	go run scripts/gendata.go tabular OUT.parquet ROWS S A SITES H SEED
//	go run scripts/gendata.go precomputed OUT.parquet ROWS D A SITES H SEED
//	go run scripts/gendata.go replicate IN.parquet OUTDIR COPIES [by-step]
//	go run scripts/gendata.go strings IN.parquet OUT.parquet
package main

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gendata:", err)
		os.Exit(1)
	}
}

func atoi(s string) int {
	v, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendata: not a number:", s)
		os.Exit(2)
	}
	return v
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: shuffle|tabular|precomputed ...")
	}
	switch args[0] {
	case "shuffle":
		if len(args) != 5 {
			return fmt.Errorf("usage: shuffle IN OUTDIR FILES SEED")
		}
		return shuffle(args[1], args[2], atoi(args[3]), uint64(atoi(args[4])))
	case "replicate":
		if len(args) != 4 && (len(args) != 5 || args[4] != "by-step") {
			return fmt.Errorf("usage: replicate IN OUTDIR COPIES [by-step]")
		}
		return replicate(args[1], args[2], atoi(args[3]), len(args) == 5)
	case "strings":
		if len(args) != 3 {
			return fmt.Errorf("usage: strings IN OUT")
		}
		return stringIDs(args[1], args[2])
	case "tabular", "precomputed":
		if len(args) != 8 {
			return fmt.Errorf("usage: %s OUT ROWS S|D A SITES H SEED", args[0])
		}
		return generate(args[0], args[1], atoi(args[2]), atoi(args[3]), atoi(args[4]), atoi(args[5]), atoi(args[6]), uint64(atoi(args[7])))
	}
	return fmt.Errorf("unknown mode %q", args[0])
}

// readAll reads an action-block dataset (state columns s1..sp) into one
// chunk with integer site ids, and returns it with its state columns.
func readAll(in string) (*traj.Chunk, []string, error) {
	cols, err := parquetio.PrefixedColumns([]string{in}, "s")
	if err != nil {
		return nil, nil, err
	}
	t, err := parquetio.Read(context.Background(), []string{in}, traj.Options{State: traj.StateSpec{Columns: cols, NonzeroSum: true}})
	if err != nil {
		return nil, nil, err
	}
	c, err := t.Chunk(true)
	return c, cols, err
}

// sorted returns c's rows in (site, traj, step) order, or in (step, site,
// traj) order with byStep.
func sorted(c *traj.Chunk, byStep bool) *traj.Chunk {
	perm := make([]int, c.Len())
	for i := range perm {
		perm[i] = i
	}
	slices.SortFunc(perm, func(x, y int) int {
		if byStep {
			return cmp.Or(cmp.Compare(c.Step[x], c.Step[y]), cmp.Compare(c.SiteInt[x], c.SiteInt[y]), cmp.Compare(c.TrajInt[x], c.TrajInt[y]))
		}
		return cmp.Or(cmp.Compare(c.SiteInt[x], c.SiteInt[y]), cmp.Compare(c.TrajInt[x], c.TrajInt[y]), cmp.Compare(c.Step[x], c.Step[y]))
	})
	return c.Select(perm)
}

// shuffle reads an action-block dataset (state columns s1..sp) and writes
// its rows in a random order split across files.
func shuffle(in, outDir string, files int, seed uint64) error {
	c, cols, err := readAll(in)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	perm := rng.Perm(c.Len())
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	per := (len(perm) + files - 1) / files
	for f := 0; f < files; f++ {
		lo, hi := f*per, min(len(perm), (f+1)*per)
		part := c.Select(perm[lo:hi])
		path := filepath.Join(outDir, fmt.Sprintf("part-%02d.parquet", f))
		if err := parquetio.WriteChunks(path, []*traj.Chunk{part}, parquetio.WriteOptions{StateColumns: cols, IntSites: true}); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %d rows in %d shuffled files to %s\n", len(perm), files, outDir)
	return nil
}

// replicate writes COPIES files, each holding every row of an action-block
// dataset in (site, traj, step) order with its trajectory ids shifted past
// the previous copy's: COPIES times the transitions, the same shape. With
// byStep the rows are in (step, site, traj) order with row groups aligned
// to steps, the layout grmdp prepare writes, trajectory ids kept.
func replicate(in, outDir string, copies int, byStep bool) error {
	c, cols, err := readAll(in)
	if err != nil {
		return err
	}
	c = sorted(c, byStep)
	shift := slices.Max(c.TrajInt) + 1
	// One chunk per step when byStep: each becomes its own row groups.
	parts := []*traj.Chunk{c}
	if byStep {
		parts = nil
		for lo := 0; lo < c.Len(); {
			hi := lo
			for hi < c.Len() && c.Step[hi] == c.Step[lo] {
				hi++
			}
			idx := make([]int, hi-lo)
			for i := range idx {
				idx[i] = lo + i
			}
			parts = append(parts, c.Select(idx))
			lo = hi
		}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	for k := 0; k < copies; k++ {
		path := filepath.Join(outDir, fmt.Sprintf("part-%02d.parquet", k))
		if err := parquetio.WriteChunks(path, parts, parquetio.WriteOptions{StateColumns: cols, IntSites: true}); err != nil {
			return err
		}
		for _, p := range parts {
			for i := range p.TrajInt {
				p.TrajInt[i] += shift
			}
		}
	}
	fmt.Printf("wrote %d rows in %d files to %s\n", copies*c.Len(), copies, outDir)
	return nil
}

// stringIDs rewrites an action-block dataset with string site and
// trajectory ids ("site-3", "patient-000000042"), as EHR exports often have
// them, in (site, traj, step) order: the input of the benchmark of string
// ids, whose interning keeps millions of strings alive while reading.
func stringIDs(in, out string) error {
	c, cols, err := readAll(in)
	if err != nil {
		return err
	}
	c = sorted(c, false)
	c.SiteStr = make([]string, c.Len())
	c.TrajStr = make([]string, c.Len())
	for i := range c.SiteStr {
		c.SiteStr[i] = fmt.Sprintf("site-%d", c.SiteInt[i])
		c.TrajStr[i] = fmt.Sprintf("patient-%09d", c.TrajInt[i])
	}
	c.SiteInt, c.TrajInt = nil, nil
	if err := parquetio.WriteChunks(out, []*traj.Chunk{c}, parquetio.WriteOptions{StateColumns: cols}); err != nil {
		return err
	}
	fmt.Printf("wrote %d rows with string ids to %s\n", c.Len(), out)
	return nil
}

// generate writes ROWS transitions of random trajectories (uniform states,
// actions and rewards) over SITES sites with horizon H: tabular states in
// 0..S-1, or precomputed dense phi lists of A*D values on the simplex.
func generate(kind, out string, rows, sd, A, sites, H int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 2))
	trajs := rows / H
	var chunks []*traj.Chunk
	const per = 1 << 17
	c := &traj.Chunk{}
	flush := func() {
		if c.Len() > 0 {
			chunks = append(chunks, c)
		}
		c = &traj.Chunk{}
	}
	for tr := 0; tr < trajs; tr++ {
		site := int64(tr % sites)
		for h := 1; h <= H; h++ {
			c.SiteInt = append(c.SiteInt, site)
			c.TrajInt = append(c.TrajInt, int64(tr))
			c.Step = append(c.Step, int64(h))
			c.ActionInt = append(c.ActionInt, int64(rng.IntN(A)))
			c.Reward = append(c.Reward, rng.Float64())
			if kind == "tabular" {
				c.W = 1
				c.State = append(c.State, float64(rng.IntN(sd)))
			} else {
				c.W = A * sd
				for a := 0; a < A; a++ {
					row := make([]float64, sd)
					s := 0.0
					for j := range row {
						row[j] = rng.Float64()
						s += row[j]
					}
					for j := range row {
						row[j] /= s
					}
					c.State = append(c.State, row...)
				}
			}
		}
		if c.Len() >= per {
			flush()
		}
	}
	flush()
	opts := parquetio.WriteOptions{StateColumns: []string{"state"}, IntSites: true}
	if kind == "precomputed" {
		opts = parquetio.WriteOptions{StateColumns: []string{"phi"}, List: true, IntSites: true}
	}
	if err := parquetio.WriteChunks(out, chunks, opts); err != nil {
		return err
	}
	fmt.Printf("wrote %d rows (%s) to %s\n", trajs*H, kind, out)
	return nil
}
