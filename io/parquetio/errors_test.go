package parquetio_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// small is a 2-site dataset: site 1 has traj 100 (row 0), traj 101 (rows
// 1-2) and traj 102 (rows 3-5), then site 2 follows.
func small() rows { return sampleRows(anyInts(1, 2), 3, 3, 2) }

func TestReadSchemaErrors(t *testing.T) {
	r := small()
	cases := []struct {
		name      string
		cols      []column
		opts      traj.Options
		sentinel  error
		fragments []string
	}{
		{"missing reward", r.columns(i64, i64, i32, i32, f64, f64)[:4], traj.Options{}, parquetio.ErrSchema,
			[]string{`column "reward"`, "missing: the file has columns [site traj step action]"}},
		{"missing state", r.columns(i64, i64, i32, i32, f64, f64), stateOpts("s1"), parquetio.ErrSchema,
			[]string{`column "s1"`, "missing"}},
		{"renamed column missing", r.columns(i64, i64, i32, i32, f64, f64), traj.Options{Columns: traj.Columns{Traj: "patient"}}, parquetio.ErrSchema,
			[]string{`column "patient"`, "missing"}},
		{"float step", r.columns(i64, i64, f64, i32, f64, f64), traj.Options{}, parquetio.ErrSchema,
			[]string{`column "step"`, "has type double, want an integer column"}},
		{"bool action", replace(r.columns(i64, i64, i32, i32, f64, f64), col("action", arrow.FixedWidthTypes.Boolean, boolsLike(r.action)...)),
			traj.Options{}, parquetio.ErrSchema, []string{`column "action"`, "has type bool, want an integer or string column"}},
		{"string reward", replace(r.columns(i64, i64, i32, i32, f64, f64), col("reward", str, anyStrings("%v", r.reward...)...)),
			traj.Options{}, parquetio.ErrSchema, []string{`column "reward"`, "has type string, want a numeric"}},
		{"binary site", replace(r.columns(i64, i64, i32, i32, f64, f64), col("site", arrow.BinaryTypes.Binary, anyStrings("%v", r.site...)...)),
			traj.Options{}, parquetio.ErrSchema, []string{`column "site"`, "has type binary"}},
		{"date traj", replace(r.columns(i64, i64, i32, i32, f64, f64), col("traj", arrow.FixedWidthTypes.Date32, r.traj...)),
			traj.Options{}, parquetio.ErrSchema, []string{`column "traj"`, "has type date"}},
		{"list state not a list", r.columns(i64, i64, i32, i32, f64, f64, "s1"), traj.Options{State: traj.StateSpec{Columns: []string{"s1"}, List: true}},
			parquetio.ErrSchema, []string{`column "s1"`, "has type double, want a list of float or double"}},
		{"list of strings", append(r.columns(i64, i64, i32, i32, f64, f64), col("phi", listOf(str), listsLike(r.step, "x")...)),
			traj.Options{State: traj.StateSpec{Columns: []string{"phi"}, List: true}}, parquetio.ErrSchema,
			[]string{`column "phi"`, "has type list<string>"}},
		{"scalar state given a list", append(r.columns(i64, i64, i32, i32, f64, f64), col("phi", listOf(f64), listsLike(r.step, 0.5)...)),
			stateOpts("phi"), parquetio.ErrSchema, []string{`column "phi"`, "has type list<double>, want a numeric"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := tmpPath(t, "x.parquet")
			writeParquet(t, path, 0, c.cols...)
			_, err := readChecked(t, []string{path}, c.opts)
			wantErr(t, err, c.sentinel, append([]string{path}, c.fragments...)...)
		})
	}
}

func replace(cols []column, c column) []column {
	out := append([]column(nil), cols...)
	for i := range out {
		if out[i].name == c.name {
			out[i] = c
		}
	}
	return out
}

func boolsLike(v []any) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = i%2 == 0
	}
	return out
}

func listsLike(v []any, x any) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = []any{x, x}
	}
	return out
}

// TestReadNulls puts one null in each required column and checks that the
// error names the file, row group, row and column. Nullable columns without
// nulls are fine.
func TestReadNulls(t *testing.T) {
	r := small()
	cols := func() []column {
		cs := r.columns(i64, str, i32, i32, f64, f64, "s1", "s2")
		for i := range cs {
			cs[i].nullable = true
			cs[i].vals = append([]any(nil), cs[i].vals...)
		}
		cs[1].vals = anyStrings("t%v", r.traj...)
		return cs
	}
	opts := stateOpts("s1", "s2")
	// No nulls: reads fine.
	path := tmpPath(t, "ok.parquet")
	writeParquet(t, path, 4, cols()...)
	if _, err := readChecked(t, []string{path}, opts); err != nil {
		t.Fatalf("nullable columns without nulls: %v", err)
	}
	for j, name := range []string{"site", "traj", "step", "action", "reward", "s1", "s2"} {
		t.Run(name, func(t *testing.T) {
			cs := cols()
			cs[j].vals[9] = nil // row group 2 (rows of 4), row 9 of the file
			path := tmpPath(t, "null.parquet")
			writeParquet(t, path, 4, cs...)
			_, err := readChecked(t, []string{path}, opts)
			wantErr(t, err, parquetio.ErrBadData, path, "row group 2, row 9", `column "`+name+`"`, "null")
		})
	}
	t.Run("list element", func(t *testing.T) {
		cs := r.columns(i64, i64, i32, i32, f64, f64)
		phi := listsLike(r.step, 0.5)
		phi[5] = []any{0.5, nil}
		cs = append(cs, col("phi", listOf(f64), phi...))
		path := tmpPath(t, "lnull.parquet")
		writeParquet(t, path, 4, cs...)
		_, err := readChecked(t, []string{path}, traj.Options{State: traj.StateSpec{Columns: []string{"phi"}, List: true}})
		wantErr(t, err, parquetio.ErrBadData, path, "row group 1, row 5", `column "phi"`, "element 1 is null")
	})
	t.Run("null list", func(t *testing.T) {
		cs := r.columns(i64, i64, i32, i32, f64, f64)
		phi := listsLike(r.step, 0.5)
		phi[2] = nil
		cs = append(cs, ncol("phi", listOf(f64), phi...))
		path := tmpPath(t, "lnull.parquet")
		writeParquet(t, path, 4, cs...)
		_, err := readChecked(t, []string{path}, traj.Options{State: traj.StateSpec{Columns: []string{"phi"}, List: true}})
		wantErr(t, err, parquetio.ErrBadData, path, "row group 0, row 2", `column "phi"`, "null")
	})
	t.Run("ragged list", func(t *testing.T) {
		cs := r.columns(i64, i64, i32, i32, f64, f64)
		phi := listsLike(r.step, 0.5)
		phi[6] = []any{0.5, 0.25, 0.25}
		cs = append(cs, col("phi", listOf(f64), phi...))
		path := tmpPath(t, "ragged.parquet")
		writeParquet(t, path, 4, cs...)
		_, err := readChecked(t, []string{path}, traj.Options{State: traj.StateSpec{Columns: []string{"phi"}, List: true}})
		wantErr(t, err, parquetio.ErrBadData, path, "row group 1, row 6", `column "phi"`, "length 3", "length 2")
	})
}

// TestReadValueErrors checks the Builder's value checks come back with the
// file, row group and row of the bad value.
func TestReadValueErrors(t *testing.T) {
	cases := []struct {
		name      string
		edit      func(r *rows)
		fragments []string
	}{
		{"nan reward", func(r *rows) { r.reward[9] = math.NaN() }, []string{"row group 2, row 9", `column "reward"`, "NaN"}},
		{"inf state", func(r *rows) { r.state[0][9] = math.Inf(1) }, []string{"row group 2, row 9", `column "s1"`, "+Inf"}},
		{"reward 1.5", func(r *rows) { r.reward[9] = 1.5 }, []string{"row group 2, row 9", `column "reward"`, "1.5 is outside [0,1]"}},
		{"step 0", func(r *rows) { r.step[9] = 0 }, []string{"row group 2, row 9", `column "step"`, "step 0 is below 1"}},
		{"negative action", func(r *rows) { r.action[9] = -1 }, []string{"row group 2, row 9", `column "action"`, "negative"}},
		{"gap", func(r *rows) { r.step[2] = 4 }, []string{"row group 0, row 2", `column "step"`, "gap inside an episode"}},
		{"duplicate", func(r *rows) { r.step[2] = 1 }, []string{"row group 0, row 2", `column "step"`, "duplicate row for site 1, traj 101, step 1", "row 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := small()
			r.reward = append([]any(nil), r.reward...)
			r.step = append([]any(nil), r.step...)
			r.action = append([]any(nil), r.action...)
			r.state = [][]any{append([]any(nil), r.state[0]...), r.state[1]}
			c.edit(&r)
			path := tmpPath(t, "v.parquet")
			writeParquet(t, path, 4, r.columns(i64, i64, i64, i64, f64, f64, "s1", "s2")...)
			_, err := readChecked(t, []string{path}, stateOpts("s1", "s2"))
			wantErr(t, err, parquetio.ErrBadData, append([]string{path}, c.fragments...)...)
		})
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeParquet(t, good, 0, small().columns(i64, i64, i32, i32, f64, f64)...)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	emptyDir := filepath.Join(dir, "nothing")
	os.MkdirAll(filepath.Join(emptyDir, "sub"), 0o755)
	write("nothing/notes.txt", []byte("hi"))
	cases := []struct {
		name      string
		path      string
		sentinel  error
		fragments []string
	}{
		{"empty file", write("empty.parquet", nil), parquetio.ErrParquet, []string{"is empty"}},
		{"text file", write("text.parquet", []byte("site,traj,step\n1,1,1\n")), parquetio.ErrParquet, []string{"not a parquet file"}},
		{"tiny", write("tiny.parquet", []byte("PAR1")), parquetio.ErrParquet, []string{"too small"}},
		{"truncated", write("trunc.parquet", data[:len(data)/2]), parquetio.ErrParquet, []string{"truncated"}},
		{"truncated footer", write("trunc2.parquet", append(append([]byte{}, data[:4]...), data[len(data)-40:]...)), parquetio.ErrParquet, []string{"footer"}},
		{"garbage footer", write("garbage.parquet", garbleFooter(data)), parquetio.ErrParquet, []string{"garbage.parquet"}},
		{"no parquet in directory", emptyDir, parquetio.ErrNoData, []string{"no .parquet files"}},
		{"no glob match", filepath.Join(dir, "*.nope"), parquetio.ErrNoData, []string{"no files match"}},
		{"missing path", filepath.Join(dir, "absent.parquet"), os.ErrNotExist, []string{"cannot read"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readChecked(t, []string{good, c.path}, traj.Options{})
			wantErr(t, err, c.sentinel, append([]string{c.path}, c.fragments...)...)
		})
	}
	if _, err := readChecked(t, nil, traj.Options{}); err == nil {
		t.Error("no paths: got no error")
	}
}

// garbleFooter overwrites the middle of the footer with junk, keeping the
// length and magic bytes.
func garbleFooter(data []byte) []byte {
	out := append([]byte{}, data...)
	n := len(out)
	flen := int(out[n-8]) | int(out[n-7])<<8 | int(out[n-6])<<16 | int(out[n-5])<<24
	start := n - 8 - flen
	for i := start + flen/4; i < start+flen*3/4; i++ {
		out[i] = 0xff
	}
	return out
}

func TestReadSchemaDisagreement(t *testing.T) {
	r := small()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	writeParquet(t, a, 0, r.slice(0, 6).columns(i64, i64, i32, i32, f64, f64)...)
	rb := r.slice(6, len(r.step))
	rb.site = anyStrings("%v", rb.site...)
	writeParquet(t, b, 0, rb.columns(str, i64, i32, i32, f64, f64)...)
	_, err := readChecked(t, []string{a, b}, traj.Options{})
	wantErr(t, err, parquetio.ErrSchema, b, `column "site"`, "is string here but integer in "+a)
}

func TestReadHive(t *testing.T) {
	r := sampleRows(anyInts(2, 10), 4, 3, 2)
	dir := t.TempDir()
	var lo int
	for i := 1; i <= len(r.step); i++ {
		if i == len(r.step) || r.site[i] != r.site[lo] {
			sub := filepath.Join(dir, "site="+anyStrings("%v", r.site[lo])[0].(string))
			os.MkdirAll(sub, 0o755)
			cs := r.slice(lo, i).columns(i64, i64, i32, i32, f64, f64)[1:]
			writeParquet(t, filepath.Join(sub, "part-0.parquet"), 0, cs...)
			lo = i
		}
	}
	// Spark's markers are skipped.
	os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, ".part-0.parquet.crc"), []byte("x"), 0o644)
	got, err := readChecked(t, []string{dir}, traj.Options{})
	if err != nil {
		t.Fatal(err)
	}
	equalTables(t, got, expected(t, r, traj.Options{}))

	// Non-integer folder names give string sites.
	os.Rename(filepath.Join(dir, "site=10"), filepath.Join(dir, "site=north%20wing"))
	got, err = readChecked(t, []string{dir}, traj.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"2", "north wing"}; len(got.Sites) != 2 || got.Sites[0] != want[0] || got.Sites[1] != want[1] {
		t.Errorf("sites: got %v, want %v", got.Sites, want)
	}
}

func TestReadNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.parquet")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no named pipes here:", err)
	}
	_, err := readChecked(t, []string{fifo}, traj.Options{})
	wantErr(t, err, parquetio.ErrParquet, fifo, "not a regular file")
}

// TestReadErrorOrder checks that the parallel, two-pass read (rows placed by
// the decode workers, states decoded after Build) reports, for inputs with
// several errors, exactly the error the serial single pass reports.
func TestReadErrorOrder(t *testing.T) {
	type edit func(r *rows, cs []column, i int)
	set := func(j int, v any) edit {
		return func(r *rows, cs []column, i int) { cs[j].vals[i] = v }
	}
	edits := []edit{
		set(0, nil), set(1, nil), set(2, nil), set(3, nil), set(4, nil), set(5, nil), set(6, nil), // nulls
		set(2, 0), set(3, -1), set(4, 1.5), set(4, math.NaN()), set(5, math.Inf(1)), set(6, -2.0), // bad values
		func(r *rows, cs []column, i int) { cs[5].vals[i], cs[6].vals[i] = 0.0, 0.0 }, // all-zero state
		func(r *rows, cs []column, i int) { cs[2].vals[i] = 1 },                       // duplicate or gap
		func(r *rows, cs []column, i int) { cs[2].vals[i] = 5 },                       // gap
	}
	rng := rand.New(rand.NewPCG(7, 11))
	opts := traj.Options{State: traj.StateSpec{Columns: []string{"s1", "s2"}, NonzeroSum: true}}
	base := sampleRows(anyInts(1, 2, 3), 4, 4, 3)
	for trial := range 300 {
		cs := base.columns(i64, i64, i32, i32, f64, f64, "s1", "s2")
		for j := range cs {
			cs[j].nullable = true
			cs[j].vals = append([]any(nil), cs[j].vals...)
		}
		for range 1 + rng.IntN(3) {
			edits[rng.IntN(len(edits))](&base, cs, rng.IntN(len(cs[0].vals)))
		}
		path := tmpPath(t, fmt.Sprintf("multi%d.parquet", trial))
		writeParquet(t, path, 1+rng.IntN(8), cs...)
		_, got := readChecked(t, []string{path}, opts)
		_, want := readChecked(t, []string{path}, onePass(opts))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d: two passes report\n  %v\nthe single pass\n  %v", trial, got, want)
		}
		// Build's sweeps over (step, site) buckets and over whole steps
		// (after a comparison sort) report the same error.
		sorted := opts
		sorted.ComparisonSort = true
		_, whole := readChecked(t, []string{path}, sorted)
		if fmt.Sprint(got) != fmt.Sprint(whole) {
			t.Fatalf("trial %d: the bucket sweep reports\n  %v\nthe whole-step sweep\n  %v", trial, got, whole)
		}
	}
}

// TestReadTwoPassSameTable checks that the two-pass read builds the table
// the serial single pass builds, for integer and string ids and labels, one
// and two state columns, shuffled rows and any row-group size.
func TestReadTwoPassSameTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	base := sampleRows(anyInts(10, 2, 33), 5, 4, 3)
	for trial := range 40 {
		r := base.permute(rng.Perm(len(base.site)))
		siteT, trajT, actionT := i64, i64, i32
		if trial%2 == 1 {
			siteT, r.site = str, anyStrings("s%v", r.site...)
		}
		if trial%3 == 1 {
			trajT, r.traj = str, anyStrings("t%v", r.traj...)
		}
		if trial%4 == 1 {
			actionT, r.action = str, anyStrings("a%v", r.action...)
		}
		names := []string{"s1", "s2"}[:1+trial%2]
		path := tmpPath(t, fmt.Sprintf("same%d.parquet", trial))
		writeParquet(t, path, 1+rng.IntN(16), r.columns(siteT, trajT, i32, actionT, f64, f64, names...)...)
		got, err := readChecked(t, []string{path}, stateOpts(names...))
		if err != nil {
			t.Fatal(err)
		}
		want, err := readChecked(t, []string{path}, onePass(stateOpts(names...)))
		if err != nil {
			t.Fatal(err)
		}
		equalTables(t, got, want)
		sorted := stateOpts(names...)
		sorted.ComparisonSort = true
		whole, err := readChecked(t, []string{path}, sorted)
		if err != nil {
			t.Fatal(err)
		}
		equalTables(t, got, whole)
	}
}

// episodes returns nTraj whole episodes of H steps at site 1, in (traj,
// step) order, without states.
func episodes(nTraj, H int) *traj.Chunk {
	c := &traj.Chunk{Src: traj.Origin{File: "mem", RowGroup: 0}}
	for tr := range nTraj {
		for h := 1; h <= H; h++ {
			c.SiteInt = append(c.SiteInt, 1)
			c.TrajInt = append(c.TrajInt, int64(tr))
			c.Step = append(c.Step, int64(h))
			c.ActionInt = append(c.ActionInt, 0)
			c.Reward = append(c.Reward, 0.5)
		}
	}
	return c
}

// TestBuildDuplicateAcrossRanges checks that Build reports the first
// duplicate in (step, site, traj) order when the rows are many enough for
// the check to run over several ranges in parallel.
func TestBuildDuplicateAcrossRanges(t *testing.T) {
	const nTraj, H = 40000, 5 // 200,000 rows
	c := episodes(nTraj, H)
	// Two duplicates: traj 39000's step 5 row becomes a second step-5 row
	// of traj 38999 (in the last range), and traj 100's step 2 row a
	// second step-2 row of traj 99 (in an earlier range: step 2 < step 5).
	c.TrajInt[39000*H+4] = 38999
	c.TrajInt[100*H+1] = 99
	for _, workers := range []int{1, 2, 8} {
		b := traj.NewBuilder(traj.Options{Workers: workers})
		if err := b.Add(c); err != nil {
			t.Fatal(err)
		}
		_, err := b.Build()
		wantErr(t, err, parquetio.ErrBadData, "duplicate row for site 1, traj 99, step 2")
	}
}

// TestBuildDuplicateBeforeGap checks that a duplicate is reported before
// any gap: one at a later step, and one later in the same step as the gap
// (the sweep that links a step and finds its duplicates goes on past its
// first gap).
func TestBuildDuplicateBeforeGap(t *testing.T) {
	const nTraj, H = 10, 4
	build := func(edit func(c *traj.Chunk)) error {
		c := episodes(nTraj, H)
		edit(c)
		b := traj.NewBuilder(traj.Options{Workers: 2})
		if err := b.Add(c); err != nil {
			t.Fatal(err)
		}
		_, err := b.Build()
		return err
	}
	// Traj 2's step-2 row moves to traj 11 (gaps at step 2 for traj 11
	// and at step 3 for traj 2), and traj 8's step-3 row becomes a second
	// step-3 row of traj 7: in step 3, after a gap there.
	err := build(func(c *traj.Chunk) {
		c.TrajInt[2*H+1] = 11
		c.TrajInt[8*H+2] = 7
	})
	wantErr(t, err, parquetio.ErrBadData, "duplicate row for site 1, traj 7, step 3")
	// A gap at step 2 (traj 1 loses its step-1 row) and a duplicate at
	// step 4.
	err = build(func(c *traj.Chunk) {
		c.TrajInt[1*H+0] = 12
		c.TrajInt[5*H+3] = 4
	})
	wantErr(t, err, parquetio.ErrBadData, "duplicate row for site 1, traj 4, step 4")
	// Without the duplicate, the gap.
	err = build(func(c *traj.Chunk) { c.TrajInt[1*H+0] = 12 })
	if !errors.Is(err, parquetio.ErrGap) || !strings.Contains(err.Error(), "traj 1 has a row at step 2 but none at step 1") {
		t.Fatalf("got %v, want the gap of traj 1 at step 2", err)
	}
}

// touchOnAdd changes a file's modification time when the first rows are
// reported: the file then changes between Read's two passes.
type touchOnAdd struct {
	t    *testing.T
	path string
	done bool
}

func (p *touchOnAdd) SetTotal(int64) {}
func (p *touchOnAdd) Add(int64) {
	if !p.done {
		p.done = true
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(p.path, later, later); err != nil {
			p.t.Error(err)
		}
	}
}

// TestReadFileChangedBetweenPasses checks that a file whose modification
// time changes during a two-pass read is reported, not mixed into a Table.
func TestReadFileChangedBetweenPasses(t *testing.T) {
	r := small()
	path := tmpPath(t, "changing.parquet")
	writeParquet(t, path, 4, r.columns(i64, i64, i32, i32, f64, f64, "s1", "s2")...)
	opts := stateOpts("s1", "s2")
	opts.Progress = &touchOnAdd{t: t, path: path}
	_, err := readChecked(t, []string{path}, opts)
	wantErr(t, err, parquetio.ErrBadData, path, "the file changed while it was read")
}

// TestReadListErrorOrder is TestReadErrorOrder for a list state (the
// precomputed map, A = 3 actions, d = 2): the two-pass read must report the
// single pass's error, including the list checks Build makes (the width
// against A, then the first row whose blocks do not sum to 1), and build
// the same table when there is none.
func TestReadListErrorOrder(t *testing.T) {
	good := func() []any { return []any{0.5, 0.5, 1.0, 0.0, 0.25, 0.75} }
	type edit func(cs []column, i int)
	setPhi := func(v any) edit { return func(cs []column, i int) { cs[5].vals[i] = v } }
	edits := []edit{
		func(cs []column, i int) { cs[0].vals[i] = nil },
		func(cs []column, i int) { cs[2].vals[i] = nil },
		func(cs []column, i int) { cs[4].vals[i] = 1.5 },
		func(cs []column, i int) { cs[3].vals[i] = -1 },
		func(cs []column, i int) { cs[2].vals[i] = 1 }, // duplicate or gap
		setPhi(nil), // null list
		setPhi([]any{0.5, nil, 1.0, 0.0, 0.25, 0.75}),                          // null element
		setPhi([]any{0.5, 0.5, 1.0}),                                           // ragged within a row group
		setPhi([]any{0.5, 0.6, 1.0, 0.0, 0.25, 0.75}),                          // block 0 sums to 1.1
		setPhi([]any{0.5, 0.5, 1.0, 0.0, 0.5, 0.75}),                           // block 2 sums to 1.25
		setPhi([]any{-0.5, 1.5, 1.0, 0.0, 0.25, 0.75}),                         // negative element
		setPhi([]any{math.NaN(), 0.5, 1.0, 0.0, 0.25, 0.75}),                   // NaN element
		func(cs []column, i int) { cs[5].vals[i] = []any{1.0, 1.0, 1.0, 1.0} }, // width 4
	}
	rng := rand.New(rand.NewPCG(17, 19))
	opts := traj.Options{State: traj.StateSpec{Columns: []string{"phi"}, List: true}}
	base := sampleRows(anyInts(1, 2, 3), 4, 4, 3)
	for trial := range 300 {
		cs := base.columns(i64, i64, i32, i32, f64, f64)
		phi := make([]any, len(base.step))
		for i := range phi {
			phi[i] = good()
		}
		cs = append(cs, col("phi", listOf(f64), phi...))
		for j := range cs {
			cs[j].nullable = true
			cs[j].vals = append([]any(nil), cs[j].vals...)
		}
		rowGroup := 1 + rng.IntN(8)
		nEdits := rng.IntN(4) // some trials have no error
		for range nEdits {
			i := rng.IntN(len(cs[0].vals))
			k := rng.IntN(len(edits))
			if k == len(edits)-1 {
				// A whole row group of another width (a ragged row
				// group is a decode error, tested above).
				g := i / rowGroup
				for r := g * rowGroup; r < min((g+1)*rowGroup, len(cs[0].vals)); r++ {
					edits[k](cs, r)
				}
				continue
			}
			edits[k](cs, i)
		}
		path := tmpPath(t, fmt.Sprintf("list%d.parquet", trial))
		writeParquet(t, path, rowGroup, cs...)
		gotT, got := readChecked(t, []string{path}, opts)
		wantT, want := readChecked(t, []string{path}, onePass(opts))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d: two passes report\n  %v\nthe single pass\n  %v", trial, got, want)
		}
		if got == nil {
			equalTables(t, gotT, wantT)
		}
	}
}

// TestReadListWidth checks the list width errors of the two-pass read
// against the single pass: every row of width 4 with A = 3 (Build's width
// check), and a first row group of width 4 before rows of width 6.
func TestReadListWidth(t *testing.T) {
	base := sampleRows(anyInts(1, 2), 3, 3, 3)
	opts := traj.Options{State: traj.StateSpec{Columns: []string{"phi"}, List: true}}
	for name, width := range map[string]func(i int) int{
		"all 4":        func(int) int { return 4 },
		"first 4 of 6": func(i int) int { return map[bool]int{true: 4, false: 6}[i < 4] },
	} {
		t.Run(name, func(t *testing.T) {
			cs := base.columns(i64, i64, i32, i32, f64, f64)
			phi := make([]any, len(base.step))
			for i := range phi {
				w := width(i)
				row := make([]any, w)
				for j := range row {
					row[j] = 3.0 / float64(w)
				}
				phi[i] = row
			}
			cs = append(cs, col("phi", listOf(f64), phi...))
			path := tmpPath(t, "width.parquet")
			writeParquet(t, path, 4, cs...)
			_, got := readChecked(t, []string{path}, opts)
			_, want := readChecked(t, []string{path}, onePass(opts))
			if got == nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("two passes report\n  %v\nthe single pass\n  %v", got, want)
			}
		})
	}
}

// TestBuilderEmptyFirstChunk: a list's width is fixed by the first chunk
// with rows, so an empty chunk of width 0 added first changes nothing.
func TestBuilderEmptyFirstChunk(t *testing.T) {
	b := traj.NewBuilder(traj.Options{State: traj.StateSpec{Columns: []string{"phi"}, List: true}})
	if err := b.Add(&traj.Chunk{Src: traj.Origin{File: "mem"}}); err != nil {
		t.Fatalf("empty chunk: %v", err)
	}
	c := &traj.Chunk{Src: traj.Origin{File: "mem"}, W: 2,
		SiteInt: []int64{1, 1}, TrajInt: []int64{1, 1}, Step: []int64{1, 2}, ActionInt: []int64{0, 1},
		Reward: []float64{0.5, 0.5}, State: []float64{1, 1, 1, 1}}
	if err := b.Add(c); err != nil {
		t.Fatalf("chunk of width 2 after an empty one: %v", err)
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if tb.W != 2 {
		t.Fatalf("W = %d, want 2", tb.W)
	}
}

// TestReadBatchedStates checks the second pass's lockstep batches of state
// columns on row groups of several batches: the table the single pass
// builds, and with a bad state deep in a row group (a later batch), the
// single pass's error.
func TestReadBatchedStates(t *testing.T) {
	const nTraj, H = 9000, 20 // 180,000 rows
	rng := rand.New(rand.NewPCG(5, 8))
	c := &traj.Chunk{W: 3}
	for tr := range nTraj {
		for h := 1; h <= H; h++ {
			c.SiteInt = append(c.SiteInt, int64(tr%3))
			c.TrajInt = append(c.TrajInt, int64(tr))
			c.Step = append(c.Step, int64(h))
			c.ActionInt = append(c.ActionInt, int64(rng.IntN(4)))
			c.Reward = append(c.Reward, rng.Float64())
			c.State = append(c.State, 0.1+rng.Float64(), rng.Float64(), rng.Float64())
		}
	}
	cols := []string{"s1", "s2", "s3"}
	opts := traj.Options{State: traj.StateSpec{Columns: cols, NonzeroSum: true}}
	write := func(name string, c *traj.Chunk) string {
		path := tmpPath(t, name)
		// Two row groups of 90,000 rows: each more than one batch.
		half := c.Len() / 2
		idx := func(lo, hi int) []int {
			var s []int
			for i := lo; i < hi; i++ {
				s = append(s, i)
			}
			return s
		}
		if err := parquetio.WriteChunks(path, []*traj.Chunk{c.Select(idx(0, half)), c.Select(idx(half, c.Len()))}, parquetio.WriteOptions{StateColumns: cols, IntSites: true}); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write("batched.parquet", c)
	got, err := readChecked(t, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := readChecked(t, []string{path}, onePass(opts))
	if err != nil {
		t.Fatal(err)
	}
	equalTables(t, got, want)
	// A negative state value at row 160,000 (the second row group's
	// second batch) and an all-zero state at row 170,000.
	c.State[160000*3+1] = -0.5
	c.State[170000*3], c.State[170000*3+1], c.State[170000*3+2] = 0, 0, 0
	path = write("batched-bad.parquet", c)
	_, err = readChecked(t, []string{path}, opts)
	_, werr := readChecked(t, []string{path}, onePass(opts))
	if err == nil || fmt.Sprint(err) != fmt.Sprint(werr) {
		t.Fatalf("two passes report\n  %v\nthe single pass\n  %v", err, werr)
	}
	wantErr(t, err, parquetio.ErrBadData, "row 160000", "s2")
}

// onePass returns opts with the serial single-pass read (traj.Options.OnePass),
// which the tests compare with the parallel two-pass read.
func onePass(opts traj.Options) traj.Options {
	opts.OnePass = true
	return opts
}
