package parquetio_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// genSpec describes a random dataset for the out-of-core tests.
type genSpec struct {
	strSites, strTrajs, strActions bool
	state                          string // "block" (s1, s2), "tabular" (state) or "list" (phi, A blocks of 2)
	H, A                           int
}

// genRows returns random trajectories in (site, traj, step) order: 1..4
// sites, 0..6 trajectories each with ids shared across sites, lengths 1..H
// (so episodes shorter than H and sites without rows at late steps), and
// every action at least once.
func genRows(rng *rand.Rand, g genSpec) *traj.Chunk {
	c := &traj.Chunk{Step: []int64{}, Reward: []float64{}, State: []float64{}}
	switch g.state {
	case "block":
		c.W = 2
	case "tabular":
		c.W = 1
	case "list":
		c.W = 2 * g.A
	}
	labels := []string{"surgery", "drug", "none", "placebo", "wait"}[:g.A]
	intSites := []int64{12, 3, -5, 1000, 7}
	for c.Len() < g.A {
		K := 1 + rng.IntN(4)
		for k := range K {
			for range rng.IntN(7) {
				tr := int64(rng.IntN(20))
				if slices.Contains(trajsOf(c, g, k, intSites), tr) {
					continue
				}
				length := 1 + rng.IntN(g.H)
				for h := 1; h <= length; h++ {
					if g.strSites {
						c.SiteStr = append(c.SiteStr, fmt.Sprintf("hosp-%d", intSites[k]))
					} else {
						c.SiteInt = append(c.SiteInt, intSites[k])
					}
					if g.strTrajs {
						c.TrajStr = append(c.TrajStr, fmt.Sprintf("p%d", tr))
					} else {
						c.TrajInt = append(c.TrajInt, tr)
					}
					c.Step = append(c.Step, int64(h))
					a := rng.IntN(g.A)
					if c.Len() <= g.A {
						a = c.Len() - 1 // every action at least once
					}
					if g.strActions {
						c.ActionStr = append(c.ActionStr, labels[a])
					} else {
						c.ActionInt = append(c.ActionInt, int64(a))
					}
					r := rng.Float64()
					switch rng.IntN(8) {
					case 0:
						r = 0
					case 1:
						r = 1
					}
					c.Reward = append(c.Reward, r)
					switch g.state {
					case "block":
						c.State = append(c.State, rng.Float64()+0.01, rng.Float64())
					case "tabular":
						c.State = append(c.State, float64(rng.IntN(6)))
					case "list":
						for range g.A {
							x := rng.Float64()
							c.State = append(c.State, x, 1-x)
						}
					}
				}
			}
		}
	}
	return c
}

// trajsOf returns the integer trajectory ids already used at site k
// (string ids are "p" + the same integer).
func trajsOf(c *traj.Chunk, g genSpec, k int, intSites []int64) []int64 {
	var out []int64
	for i := range c.Len() {
		var site int64
		if g.strSites {
			fmt.Sscanf(c.SiteStr[i], "hosp-%d", &site)
		} else {
			site = c.SiteInt[i]
		}
		if site != intSites[k] {
			continue
		}
		if g.strTrajs {
			var tr int64
			fmt.Sscanf(c.TrajStr[i], "p%d", &tr)
			out = append(out, tr)
		} else {
			out = append(out, c.TrajInt[i])
		}
	}
	return out
}

func (g genSpec) options() (traj.Options, parquetio.WriteOptions) {
	var o traj.Options
	var w parquetio.WriteOptions
	switch g.state {
	case "block":
		o.State = traj.StateSpec{Columns: []string{"s1", "s2"}, NonzeroSum: true}
		w.StateColumns = []string{"s1", "s2"}
	case "tabular":
		o.State = traj.StateSpec{Columns: []string{"state"}, Integer: true}
		w.StateColumns = []string{"state"}
	case "list":
		o.State = traj.StateSpec{Columns: []string{"phi"}, List: true}
		w.StateColumns = []string{"phi"}
		w.List = true
	}
	return o, w
}

// writeShuffled writes c's rows shuffled across 1..3 files, each in row
// groups of 1..12 rows, and returns the paths.
func writeShuffled(t *testing.T, rng *rand.Rand, c *traj.Chunk, wo parquetio.WriteOptions) []string {
	t.Helper()
	dir := t.TempDir()
	perm := rng.Perm(c.Len())
	nf := 1 + rng.IntN(min(3, c.Len()))
	var paths []string
	for f := range nf {
		part := perm[f*len(perm)/nf : (f+1)*len(perm)/nf]
		path := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", f))
		o := wo
		o.RowGroupRows = 1 + rng.IntN(12)
		if err := parquetio.WriteChunks(path, []*traj.Chunk{c.Select(part)}, o); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// checkWindow checks ReadSteps(lo, hi)'s table against Read's: the same
// sites, actions, A, H, W, sources and trajectory counts; bit for bit the
// same rows at steps lo..hi (trajectory ordinals included), linked the same
// way except that rows at step hi have no successor; no rows elsewhere.
func checkWindow(t *testing.T, got, want *traj.Table, lo, hi int) {
	t.Helper()
	if !reflect.DeepEqual(got.Sites, want.Sites) || !reflect.DeepEqual(got.Actions, want.Actions) || got.A != want.A || got.H != want.H || got.W != want.W {
		t.Fatalf("window %d..%d: sites %v actions %v A=%d H=%d W=%d, want %v %v %d %d %d",
			lo, hi, got.Sites, got.Actions, got.A, got.H, got.W, want.Sites, want.Actions, want.A, want.H, want.W)
	}
	if !reflect.DeepEqual(got.Trajectories, want.Trajectories) || !reflect.DeepEqual(got.Sources, want.Sources) {
		t.Fatalf("window %d..%d: trajectories %v sources %v, want %v %v", lo, hi, got.Trajectories, got.Sources, want.Trajectories, want.Sources)
	}
	if len(got.Steps) != want.H {
		t.Fatalf("window %d..%d: %d steps, want %d", lo, hi, len(got.Steps), want.H)
	}
	K := len(want.Sites)
	rows := 0
	for h := 1; h <= want.H; h++ {
		g, w := &got.Steps[h-1], &want.Steps[h-1]
		if g.Weight != nil {
			t.Fatalf("window %d..%d: step %d has weights", lo, hi, h)
		}
		if len(g.SiteStart) != K+1 {
			t.Fatalf("window %d..%d: step %d has %d site offsets, want %d", lo, hi, h, len(g.SiteStart), K+1)
		}
		if h < lo || h > hi {
			if slices.ContainsFunc(g.SiteStart, func(v int32) bool { return v != 0 }) || g.Len() != 0 ||
				len(g.Traj)+len(g.Action)+len(g.State)+len(g.Next) != 0 {
				t.Fatalf("window %d..%d: step %d outside it holds rows: %+v", lo, hi, h, *g)
			}
			continue
		}
		rows += w.Len()
		if !slices.Equal(g.SiteStart, w.SiteStart) || !slices.Equal(g.Action, w.Action) ||
			!sameBits(g.Reward, w.Reward) || !sameBits(g.State, w.State) {
			t.Fatalf("window %d..%d: step %d differs:\n got %+v\nwant %+v", lo, hi, h, *g, *w)
		}
		wantNext := w.Next
		if h == hi {
			wantNext = slices.Repeat([]int32{-1}, w.Len())
		}
		if !slices.Equal(g.Next, wantNext) {
			t.Fatalf("window %d..%d: step %d links %v, want %v", lo, hi, h, g.Next, wantNext)
		}
		if !slices.Equal(g.Traj, w.Traj) {
			t.Fatalf("window %d..%d: step %d trajectory ordinals %v, want Read's %v", lo, hi, h, g.Traj, w.Traj)
		}
	}
	if got.Rows != rows {
		t.Fatalf("window %d..%d: Rows = %d, want %d", lo, hi, got.Rows, rows)
	}
}

func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// checkSurvey checks the Plan's counts and labels against Read's table.
func checkSurvey(t *testing.T, p *parquetio.Plan, want *traj.Table) {
	t.Helper()
	if !reflect.DeepEqual(p.Sites, want.Sites) || !reflect.DeepEqual(p.Actions, want.Actions) || p.A != want.A || p.H != want.H || p.W != want.W {
		t.Fatalf("plan: sites %v actions %v A=%d H=%d W=%d, want %v %v %d %d %d",
			p.Sites, p.Actions, p.A, p.H, p.W, want.Sites, want.Actions, want.A, want.H, want.W)
	}
	if p.Rows != want.Rows || !reflect.DeepEqual(p.Trajectories, want.Trajectories) || !reflect.DeepEqual(p.Sources, want.Sources) {
		t.Fatalf("plan: rows %d trajectories %v sources %v, want %d %v %v", p.Rows, p.Trajectories, p.Sources, want.Rows, want.Trajectories, want.Sources)
	}
	if len(p.CellRows) != want.H {
		t.Fatalf("plan: %d steps of cell counts, want %d", len(p.CellRows), want.H)
	}
	for h := range want.H {
		st := &want.Steps[h]
		for k := range want.Sites {
			if n := int(st.SiteStart[k+1] - st.SiteStart[k]); p.CellRows[h][k] != n {
				t.Fatalf("plan: CellRows[%d][%d] = %d, want %d", h, k, p.CellRows[h][k], n)
			}
		}
	}
}

// TestReadStepsMatchesRead reads random inputs (integer and string sites,
// trajectories and actions; three kinds of state; rows shuffled across
// files and small row groups) in every window lo..hi and checks each
// against Read's table, and the survey's counts against it too.
func TestReadStepsMatchesRead(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	states := []string{"block", "tabular", "list"}
	for trial := range 60 {
		g := genSpec{strSites: trial%2 == 1, strTrajs: trial%4 >= 2, strActions: trial%8 >= 4, state: states[trial%3],
			H: 1 + rng.IntN(5), A: 1 + rng.IntN(4)}
		c := genRows(rng, g)
		opts, wo := g.options()
		switch trial % 5 {
		case 1:
			opts.Horizon = g.H + 2 // steps without rows
		case 2:
			if !g.strActions && g.state != "list" {
				opts.Actions = g.A + 1
			}
		case 3:
			opts.Workers = 1
		}
		paths := writeShuffled(t, rng, c, wo)
		name := fmt.Sprintf("trial %d %+v", trial, g)
		want, err := parquetio.Read(ctx, paths, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := parquetio.Survey(ctx, paths, opts)
		if err != nil {
			t.Fatalf("%s: survey: %v", name, err)
		}
		checkSurvey(t, p, want)
		if g.state == "tabular" {
			maxState := -1.0
			for h := range want.Steps {
				for _, v := range want.Steps[h].State {
					maxState = max(maxState, v)
				}
			}
			if p.MaxState != maxState {
				t.Fatalf("%s: MaxState = %v, want %v", name, p.MaxState, maxState)
			}
		} else if p.MaxState != -1 {
			t.Fatalf("%s: MaxState = %v, want -1", name, p.MaxState)
		}
		for lo := 1; lo <= want.H; lo++ {
			for hi := lo; hi <= want.H; hi++ {
				got, err := p.ReadSteps(ctx, lo, hi)
				if err != nil {
					t.Fatalf("%s: ReadSteps(%d, %d): %v", name, lo, hi, err)
				}
				checkWindow(t, got, want, lo, hi)
			}
		}
		// The whole range is Read's table itself.
		got, err := p.ReadSteps(ctx, 1, want.H)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: ReadSteps(1, H) differs from Read", name)
		}
	}
}

// TestReadStepsHive reads Hive-style folders (site=X, no site column),
// with integer and then string folder names, and integer or string
// trajectory ids, in every window.
func TestReadStepsHive(t *testing.T) {
	for _, strTrajs := range []bool{false, true} {
		t.Run(fmt.Sprintf("string trajectory ids %v", strTrajs), func(t *testing.T) { testReadStepsHive(t, strTrajs) })
	}
}

func testReadStepsHive(t *testing.T, strTrajs bool) {
	ctx := context.Background()
	r := sampleRows(anyInts(2, 10, 7), 5, 4, 3)
	trajType := i64
	if strTrajs {
		// Labels whose lexical order is not the numeric order of the ids.
		trajType = str
		for i, v := range r.traj {
			r.traj[i] = fmt.Sprintf("%02d-%d", v.(int)*37%23, v)
		}
	}
	dir := t.TempDir()
	var lo int
	for i := 1; i <= len(r.step); i++ {
		if i == len(r.step) || r.site[i] != r.site[lo] {
			sub := filepath.Join(dir, "site="+anyStrings("%v", r.site[lo])[0].(string))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			cs := r.slice(lo, i).columns(i64, trajType, i32, i32, f64, f64, "s1", "s2")[1:]
			writeParquet(t, filepath.Join(sub, "part-0.parquet"), 4, cs...)
			lo = i
		}
	}
	opts := stateOpts("s1", "s2")
	for _, rename := range []bool{false, true} {
		if rename {
			if err := os.Rename(filepath.Join(dir, "site=10"), filepath.Join(dir, "site=north%20wing")); err != nil {
				t.Fatal(err)
			}
		}
		want, err := parquetio.Read(ctx, []string{dir}, opts)
		if err != nil {
			t.Fatal(err)
		}
		p, err := parquetio.Survey(ctx, []string{dir}, opts)
		if err != nil {
			t.Fatal(err)
		}
		checkSurvey(t, p, want)
		for lo := 1; lo <= want.H; lo++ {
			for hi := lo; hi <= want.H; hi++ {
				got, err := p.ReadSteps(ctx, lo, hi)
				if err != nil {
					t.Fatalf("ReadSteps(%d, %d): %v", lo, hi, err)
				}
				checkWindow(t, got, want, lo, hi)
			}
		}
		// A Plan serves windows concurrently.
		tables := make([]*traj.Table, want.H)
		errs := make([]error, want.H)
		var wg sync.WaitGroup
		for h := 1; h <= want.H; h++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tables[h-1], errs[h-1] = p.ReadSteps(ctx, h, min(h+1, want.H))
			}()
		}
		wg.Wait()
		for h := 1; h <= want.H; h++ {
			if errs[h-1] != nil {
				t.Fatal(errs[h-1])
			}
			checkWindow(t, tables[h-1], want, h, min(h+1, want.H))
		}
	}
}

// TestReadStepsArguments checks that windows outside 1..H are refused.
func TestReadStepsArguments(t *testing.T) {
	c := genRows(rand.New(rand.NewPCG(1, 1)), genSpec{state: "block", H: 3, A: 2})
	opts, wo := genSpec{state: "block"}.options()
	path := tmpPath(t, "d.parquet")
	if err := parquetio.WriteChunks(path, []*traj.Chunk{c}, wo); err != nil {
		t.Fatal(err)
	}
	opts.Horizon = 3
	p, err := parquetio.Survey(context.Background(), []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range [][2]int{{0, 1}, {2, 1}, {1, 4}, {4, 4}} {
		if _, err := p.ReadSteps(context.Background(), w[0], w[1]); err == nil {
			t.Errorf("ReadSteps(%d, %d): got no error", w[0], w[1])
		}
	}
}

// stepAligned writes want's rows as `grmdp prepare` does: sorted by step,
// one chunk (so one or more row groups of rgRows) per step. It returns the
// number of row groups of each step.
func stepAligned(t *testing.T, want *traj.Table, path string, wo parquetio.WriteOptions, rgRows int) []int {
	t.Helper()
	all, err := want.Chunk(false)
	if err != nil {
		t.Fatal(err)
	}
	var chunks []*traj.Chunk
	groups := make([]int, want.H+1) // groups[h] for step h
	row := 0
	for h := 1; h <= want.H; h++ {
		n := want.Steps[h-1].Len()
		idx := make([]int, n)
		for j := range idx {
			idx[j] = row + j
		}
		row += n
		if n > 0 {
			chunks = append(chunks, all.Select(idx))
			groups[h] = (n + rgRows - 1) / rgRows
		}
	}
	wo.RowGroupRows = rgRows
	if err := parquetio.WriteChunks(path, chunks, wo); err != nil {
		t.Fatal(err)
	}
	return groups
}

// TestReadStepsSkipsRowGroups checks, on a file whose row groups each hold
// one step, that a window decodes only its steps' row groups: it counts
// them, and it corrupts every other row group's column chunks after the
// survey, which must not disturb the window. A file changed after the
// survey is an error.
func TestReadStepsSkipsRowGroups(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	g := genSpec{strSites: true, state: "block", H: 5, A: 3}
	var c *traj.Chunk
	for c == nil || c.Len() < 60 {
		c = genRows(rng, g)
	}
	opts, wo := g.options()
	src := writeShuffled(t, rng, c, wo)
	ref, err := parquetio.Read(ctx, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	path := tmpPath(t, "prepared.parquet")
	groups := stepAligned(t, ref, path, wo, 4)
	want, err := parquetio.Read(ctx, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	p, err := parquetio.Survey(ctx, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range groups {
		total += n
	}
	if p.RowGroups() != total {
		t.Fatalf("RowGroups() = %d, want %d", p.RowGroups(), total)
	}
	for h := 1; h <= want.H; h++ {
		hi := min(h+1, want.H)
		wantGroups := groups[h]
		if hi > h {
			wantGroups += groups[hi]
		}
		if got := p.RowGroupsFor(h, hi); got != wantGroups {
			t.Errorf("RowGroupsFor(%d, %d) = %d, want %d", h, hi, got, wantGroups)
		}
		tb, err := p.ReadSteps(ctx, h, hi)
		if err != nil {
			t.Fatal(err)
		}
		checkWindow(t, tb, want, h, hi)
	}
	if p.RowGroupsFor(1, want.H) != total {
		t.Errorf("RowGroupsFor(1, H) = %d, want %d", p.RowGroupsFor(1, want.H), total)
	}

	// Corrupt the row groups of steps 1 and 2, keeping the file's size and
	// modification time: a window of steps 3..4 must not notice.
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	md := fr.MetaData()
	fr.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for rg := range groups[1] + groups[2] {
		r := md.RowGroup(rg)
		for j := range r.NumColumns() {
			cc, err := r.ColumnChunk(j)
			if err != nil {
				t.Fatal(err)
			}
			off := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
				off = min(off, cc.DictionaryPageOffset())
			}
			if _, err := f.WriteAt(slices.Repeat([]byte{0xff}, int(cc.TotalCompressedSize())), off); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.Close()
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	tb, err := p.ReadSteps(ctx, 3, 4)
	if err != nil {
		t.Fatalf("window 3..4 read a corrupted row group of steps 1..2: %v", err)
	}
	checkWindow(t, tb, want, 3, 4)
	if _, err := p.ReadSteps(ctx, 2, 3); !errors.Is(err, parquetio.ErrParquet) {
		t.Fatalf("window 2..3 over corrupted row groups: got %v, want an error wrapping ErrParquet", err)
	}

	// A file changed since the survey.
	if err := os.Chtimes(path, st.ModTime(), st.ModTime().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err = p.ReadSteps(ctx, 3, 4)
	wantErr(t, err, parquetio.ErrBadData, path, "changed since it was surveyed")
}

// defectRows returns a dataset of 3 sites with integer ids, 4 trajectories
// each with steps 1..4 in (site, traj, step) order, and the index of the
// row of site 2, traj 1 at step h.
func defectRows() (*traj.Chunk, func(h int) int) {
	c := &traj.Chunk{W: 2}
	for _, s := range []int64{1, 2, 3} {
		for tr := range int64(4) {
			for h := range int64(4) {
				c.SiteInt = append(c.SiteInt, s)
				c.TrajInt = append(c.TrajInt, tr)
				c.Step = append(c.Step, h+1)
				c.ActionInt = append(c.ActionInt, (tr+h)%3)
				c.Reward = append(c.Reward, float64(tr+h)/10)
				c.State = append(c.State, 1+float64(h), float64(tr))
			}
		}
	}
	return c, func(h int) int { return 16 + 4 + h - 1 }
}

// readStepsErrors checks that every window meeting the steps in bad fails
// with Read's message, and every other window succeeds.
func readStepsErrors(t *testing.T, paths []string, opts traj.Options, bad func(lo, hi int) bool) {
	t.Helper()
	ctx := context.Background()
	_, readErr := parquetio.Read(ctx, paths, opts)
	if readErr == nil {
		t.Fatal("Read found no error")
	}
	p, err := parquetio.Survey(ctx, paths, opts)
	if err != nil {
		t.Fatalf("survey: %v", err)
	}
	for lo := 1; lo <= p.H; lo++ {
		for hi := lo; hi <= p.H; hi++ {
			_, err := p.ReadSteps(ctx, lo, hi)
			switch {
			case bad(lo, hi) && (err == nil || err.Error() != readErr.Error() || errors.Is(err, parquetio.ErrGap) != errors.Is(readErr, parquetio.ErrGap)):
				t.Errorf("ReadSteps(%d, %d): got %v, want Read's %q", lo, hi, err, readErr)
			case !bad(lo, hi) && err != nil:
				t.Errorf("ReadSteps(%d, %d): %v", lo, hi, err)
			}
		}
	}
}

// TestReadStepsDuplicate: a duplicate row at step 2, in another file and
// row group than the original, is reported by every window holding step 2
// with Read's message (which names both rows).
func TestReadStepsDuplicate(t *testing.T) {
	c, at := defectRows()
	_, wo := genSpec{state: "block"}.options()
	opts := stateOpts("s1", "s2")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	wo.RowGroupRows = 5
	// a holds every row but those of site 3, traj 2; b holds them, with a
	// copy of site 2, traj 1, step 2 as its row 2.
	var rest []int
	for i := range c.Len() {
		if i < 40 || i >= 44 {
			rest = append(rest, i)
		}
	}
	if err := parquetio.WriteChunks(a, []*traj.Chunk{c.Select(rest)}, wo); err != nil {
		t.Fatal(err)
	}
	dup := c.Select([]int{40, 41, at(2), 42, 43})
	dup.Reward[2] = 0.75
	if err := parquetio.WriteChunks(b, []*traj.Chunk{dup}, wo); err != nil {
		t.Fatal(err)
	}
	_, err := parquetio.Read(context.Background(), []string{a, b}, opts)
	wantErr(t, err, parquetio.ErrBadData, "duplicate row for site 2, traj 1, step 2", b+": row group 0, row 2", fmt.Sprintf("also at %s row %d", a, at(2)))
	if errors.Is(err, parquetio.ErrGap) {
		t.Errorf("a duplicate's error %q wraps ErrGap", err)
	}
	readStepsErrors(t, []string{a, b}, opts, func(lo, hi int) bool { return lo <= 2 && 2 <= hi })
}

// TestReadStepsGap: an episode with steps 1, 2 and 4 is reported by every
// window holding steps 3 and 4 with Read's message; a window starting at
// step 4 needs no predecessor.
func TestReadStepsGap(t *testing.T) {
	c, at := defectRows()
	var keep []int
	for i := range c.Len() {
		if i != at(3) {
			keep = append(keep, i)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	rng.Shuffle(len(keep), func(i, j int) { keep[i], keep[j] = keep[j], keep[i] })
	c = c.Select(keep)
	_, wo := genSpec{state: "block"}.options()
	wo.RowGroupRows = 20
	path := tmpPath(t, "gap.parquet")
	if err := parquetio.WriteChunks(path, []*traj.Chunk{c}, wo); err != nil {
		t.Fatal(err)
	}
	row := slices.Index(keep, at(4))
	// The window 3..4 drops rows before it in its row group, so the row's
	// place in the window is not its place in the file.
	if !slices.ContainsFunc(c.Step[row/20*20:row], func(h int64) bool { return h < 3 }) {
		t.Fatalf("the shuffle put no row of steps 1..2 before row %d in its row group", row)
	}
	opts := stateOpts("s1", "s2")
	_, err := parquetio.Read(context.Background(), []string{path}, opts)
	wantErr(t, err, parquetio.ErrBadData, "gap inside an episode", fmt.Sprintf("row group %d, row %d", row/20, row), "site 2, traj 1")
	wantErr(t, err, parquetio.ErrGap)
	readStepsErrors(t, []string{path}, opts, func(lo, hi int) bool { return lo <= 3 && 4 <= hi })
}

// TestReadStepsTrajWithoutStepOne: a trajectory whose first row is at step
// 3 (site 2, traj 1 has rows at steps 3 and 4 only) is a gap, which every
// window holding steps 2 and 3 reports with Read's message. A window
// starting at step 3 or 4 reports nothing: it numbers that trajectory's
// rows -1 and every other row as Read numbers it on the input without that
// trajectory.
func TestReadStepsTrajWithoutStepOne(t *testing.T) {
	ctx := context.Background()
	c, at := defectRows()
	var keep, clean []int
	for i := range c.Len() {
		if i != at(1) && i != at(2) {
			keep = append(keep, i)
		}
		if i < at(1) || i > at(4) {
			clean = append(clean, i)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	rng.Shuffle(len(keep), func(i, j int) { keep[i], keep[j] = keep[j], keep[i] })
	_, wo := genSpec{state: "block"}.options()
	wo.RowGroupRows = 7
	path, cleanPath := tmpPath(t, "late-start.parquet"), tmpPath(t, "clean.parquet")
	if err := parquetio.WriteChunks(path, []*traj.Chunk{c.Select(keep)}, wo); err != nil {
		t.Fatal(err)
	}
	if err := parquetio.WriteChunks(cleanPath, []*traj.Chunk{c.Select(clean)}, wo); err != nil {
		t.Fatal(err)
	}
	opts := stateOpts("s1", "s2")
	_, err := parquetio.Read(ctx, []string{path}, opts)
	wantErr(t, err, parquetio.ErrGap, "site 2, traj 1 has a row at step 3 but none at step 2")
	readStepsErrors(t, []string{path}, opts, func(lo, hi int) bool { return lo <= 2 && 3 <= hi })
	want, err := parquetio.Read(ctx, []string{cleanPath}, opts)
	if err != nil {
		t.Fatal(err)
	}
	p, err := parquetio.Survey(ctx, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for lo := 3; lo <= 4; lo++ {
		for hi := lo; hi <= 4; hi++ {
			got, err := p.ReadSteps(ctx, lo, hi)
			if err != nil {
				t.Fatalf("ReadSteps(%d, %d): %v", lo, hi, err)
			}
			for h := lo; h <= hi; h++ {
				g := &got.Steps[h-1]
				var late []string
				var rest []int32
				for j, tr := range g.Traj {
					if tr == -1 {
						late = append(late, got.Sites[g.Site(j)])
					} else {
						rest = append(rest, tr)
					}
				}
				if !slices.Equal(late, []string{"2"}) {
					t.Errorf("ReadSteps(%d, %d): step %d: rows numbered -1 at sites %v, want one at site 2", lo, hi, h, late)
				}
				if !slices.Equal(rest, want.Steps[h-1].Traj) {
					t.Errorf("ReadSteps(%d, %d): step %d: ordinals %v, want %v", lo, hi, h, rest, want.Steps[h-1].Traj)
				}
			}
		}
	}
}

// TestSurveyBadValue: a reward of 2.0 in the third file's second row group
// fails the survey with Read's exact message.
func TestSurveyBadValue(t *testing.T) {
	c, _ := defectRows()
	_, wo := genSpec{state: "block"}.options()
	wo.RowGroupRows = 4
	dir := t.TempDir()
	var paths []string
	for f := range 3 {
		part := c.Select([]int{16 * f, 16*f + 1, 16*f + 2, 16*f + 3, 16*f + 4, 16*f + 5, 16*f + 6, 16*f + 7})
		if f == 2 {
			part.Reward[6] = 2.0
		}
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("f%d.parquet", f)))
		if err := parquetio.WriteChunks(paths[f], []*traj.Chunk{part}, wo); err != nil {
			t.Fatal(err)
		}
	}
	opts := stateOpts("s1", "s2")
	_, readErr := parquetio.Read(context.Background(), paths, opts)
	wantErr(t, readErr, parquetio.ErrBadData, paths[2]+": row group 1, row 6", `column "reward"`, "reward 2 is outside [0,1]")
	_, err := parquetio.Survey(context.Background(), paths, opts)
	if err == nil || err.Error() != readErr.Error() || !errors.Is(err, parquetio.ErrBadData) {
		t.Fatalf("survey: got %v, want Read's %q", err, readErr)
	}
}

// buildOnly says whether err is one of the errors only Build finds: those
// the survey leaves to ReadSteps.
func buildOnly(err error) bool {
	return strings.Contains(err.Error(), "duplicate row for site") || strings.Contains(err.Error(), "gap inside an episode")
}

// TestSurveyLikeRead runs Survey and Read on every input of the bad-input
// corpus (testdata/bad) and of parquet-testing, under several options: the
// survey must fail exactly when Read does, with the same message, except
// for duplicates and gaps, which ReadSteps over all steps must then report
// with Read's message; when Read succeeds, ReadSteps over all steps must
// give Read's table.
func TestSurveyLikeRead(t *testing.T) {
	const badDir = "../../testdata/bad"
	entries, err := os.ReadDir(badDir)
	if err != nil {
		t.Fatalf("no corpus at %s: %v", badDir, err)
	}
	var inputs []string
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".parquet") {
			inputs = append(inputs, filepath.Join(badDir, e.Name()))
		}
	}
	inputs = append(inputs, filepath.Join(badDir, "absent.parquet"), "testdata/duckdb_trajectories.parquet")
	for _, sub := range []string{"data", "bad_data"} {
		m, _ := filepath.Glob(filepath.Join(corpusDir, sub, "*.parquet"))
		inputs = append(inputs, m...)
	}
	block := traj.StateSpec{Columns: []string{"s1", "s2"}, NonzeroSum: true}
	variants := []traj.Options{
		{State: block},
		{State: block, Horizon: 3},
		{State: block, Actions: 2},
		{State: block, ActionLabels: []string{"drug", "none", "surgery"}},
		{State: traj.StateSpec{Columns: []string{"state"}, Integer: true}},
		{State: traj.StateSpec{Columns: []string{"state"}, Integer: true, Max: 5}},
		{State: traj.StateSpec{Columns: []string{"phi"}, List: true}},
		{State: traj.StateSpec{Columns: []string{"phi"}, List: true, D: 2}},
		{State: traj.StateSpec{Columns: []string{"s1", "s2", "s3"}}},
		{},
	}
	ctx := context.Background()
	seen := map[string]int{}
	for _, in := range inputs {
		for vi, opts := range variants {
			want, readErr := parquetio.Read(ctx, []string{in}, opts)
			p, err := parquetio.Survey(ctx, []string{in}, opts)
			name := fmt.Sprintf("%s, options %d", in, vi)
			switch {
			case readErr != nil && buildOnly(readErr):
				seen["build only"]++
				if err != nil {
					t.Errorf("%s: survey: %v, want success (Read: %v)", name, err, readErr)
					continue
				}
				_, err := p.ReadSteps(ctx, 1, p.H)
				if err == nil || err.Error() != readErr.Error() {
					t.Errorf("%s: ReadSteps(1, H): got %v, want Read's %q", name, err, readErr)
				}
			case readErr != nil:
				seen["error"]++
				if err == nil || err.Error() != readErr.Error() {
					t.Errorf("%s: survey: got %v, want Read's %q", name, err, readErr)
				}
			default:
				seen["table"]++
				if err != nil {
					t.Errorf("%s: survey: %v", name, err)
					continue
				}
				checkSurvey(t, p, want)
				got, err := p.ReadSteps(ctx, 1, p.H)
				if err != nil {
					t.Errorf("%s: ReadSteps(1, H): %v", name, err)
				} else if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: ReadSteps(1, H) differs from Read", name)
				}
			}
		}
	}
	t.Logf("%d inputs x %d options: %v", len(inputs), len(variants), seen)
	if seen["build only"] < 2 || seen["table"] < 4 {
		t.Errorf("the corpus exercised too little: %v", seen)
	}
}
