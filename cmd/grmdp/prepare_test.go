package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// readChunk reads the action-block data at path (state s1..s3) and returns
// its rows as one chunk with integer site ids.
func readChunk(t *testing.T, path string) *traj.Chunk {
	t.Helper()
	tb, err := parquetio.Read(context.Background(), []string{path}, traj.Options{State: traj.StateSpec{Columns: []string{"s1", "s2", "s3"}}})
	if err != nil {
		t.Fatal(err)
	}
	all, err := tb.Chunk(true)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// simulatedChunk simulates the benchmark at 5 sites and returns its rows as
// one chunk (integer sites, trajectories and actions), with the episodes of
// every third trajectory ending at step 3 and every trajectory of site 4
// ending by step 4, so that episodes are shorter than H and a site has no
// rows at the last steps.
func simulatedChunk(t *testing.T, dir string, trajectories string) *traj.Chunk {
	t.Helper()
	data := filepath.Join(dir, "sim.parquet")
	mustRun(t, "simulate", "--scenario", "benchmark", "--sites", "5", "--trajectories", trajectories, "--horizon", "6", "--seed", "5", "-o", data)
	all := readChunk(t, data)
	var keep []int
	for i := range all.Len() {
		tr, h := all.TrajInt[i], all.Step[i]
		if tr%3 == 1 && h > 3 || all.SiteInt[i] == 4 && h > 4 {
			continue
		}
		keep = append(keep, i)
	}
	return all.Select(keep)
}

// labelled returns c with string sites, trajectory ids and actions, whose
// lexical orders are not the numeric orders of the integers they replace.
func labelled(c *traj.Chunk) *traj.Chunk {
	idx := make([]int, c.Len())
	for i := range idx {
		idx[i] = i
	}
	out := c.Select(idx)
	out.SiteStr, out.TrajStr, out.ActionStr = make([]string, c.Len()), make([]string, c.Len()), make([]string, c.Len())
	for i := range c.Len() {
		out.SiteStr[i] = []string{"", "north", "east", "south", "west", "centre"}[c.SiteInt[i]]
		out.TrajStr[i] = fmt.Sprintf("%03d-p%d", c.TrajInt[i]*37%101, c.TrajInt[i])
		out.ActionStr[i] = fmt.Sprintf("%c-dose%d", 'z'-c.ActionInt[i], c.ActionInt[i])
	}
	out.SiteInt, out.TrajInt, out.ActionInt = nil, nil, nil
	return out
}

// writeShuffledParts writes c's rows shuffled across three files of row
// groups of 500 rows in dir (whose names sort in another order than the
// rows) and returns dir.
func writeShuffledParts(t *testing.T, dir string, c *traj.Chunk, seed uint64) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	perm := rand.New(rand.NewPCG(seed, 1)).Perm(c.Len())
	n := len(perm)
	opts := parquetio.WriteOptions{StateColumns: []string{"s1", "s2", "s3"}, RowGroupRows: 500}
	for i, cut := range [][2]int{{0, n / 5}, {n / 5, n / 2}, {n / 2, n}} {
		p := filepath.Join(dir, []string{"c.parquet", "a.parquet", "b.parquet"}[i])
		if err := parquetio.WriteChunks(p, []*traj.Chunk{c.Select(perm[cut[0]:cut[1]])}, opts); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// prepareBoth runs prepare in memory and out of core (with extra flags) on
// data and checks that both print the same line and write the same bytes.
func prepareBoth(t *testing.T, dir, name string, data []string, extra ...string) []byte {
	t.Helper()
	mem, ooc := filepath.Join(dir, name+"-mem.parquet"), filepath.Join(dir, name+"-ooc.parquet")
	want := mustRun(t, append(append([]string{"prepare", "-o", mem}, extra...), data...)...)
	got := mustRun(t, append(append([]string{"prepare", "--out-of-core", "-o", ooc}, extra...), data...)...)
	if strings.ReplaceAll(got, ooc, mem) != want {
		t.Errorf("%s: prepare --out-of-core printed\n%s\nin memory:\n%s", name, got, want)
	}
	b, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := os.ReadFile(ooc); err != nil || !bytes.Equal(c, b) {
		t.Errorf("%s: prepare --out-of-core wrote other bytes than prepare in memory (%v)", name, err)
	}
	return b
}

// TestPrepareOutOfCoreSameBytes: prepare writes the same file in memory
// and out of core (with
// --out-of-core, or by itself when the rows would not fit in --max-memory),
// for the same rows in any order and split across files, with integer or
// string sites, trajectory ids and actions, shorter episodes, a site
// without rows at the last steps, steps without rows (--horizon) and small
// row groups.
func TestPrepareOutOfCoreSameBytes(t *testing.T) {
	dir := t.TempDir()
	c := simulatedChunk(t, dir, "100,200,300,150,250")
	opts := parquetio.WriteOptions{StateColumns: []string{"s1", "s2", "s3"}}
	original := filepath.Join(dir, "original.parquet")
	if err := parquetio.WriteChunks(original, []*traj.Chunk{c}, opts); err != nil {
		t.Fatal(err)
	}
	variants := rowVariants(t, dir, original)
	ref := prepareBoth(t, dir, "original", variants["original"])
	for _, v := range []string{"shuffled", "split"} {
		if b := prepareBoth(t, dir, v, variants[v]); !bytes.Equal(b, ref) {
			t.Errorf("prepare of the %s rows differs from that of the original rows", v)
		}
	}
	prepareBoth(t, dir, "horizon", variants["split"], "--horizon", "8", "--row-group-rows", "70")
	labels := writeShuffledParts(t, filepath.Join(dir, "labelled"), labelled(c), 9)
	prepareBoth(t, dir, "labelled", []string{labels}, "--row-group-rows", "100")
	tab := labelled(c)
	for i, v := range tab.State {
		tab.State[i] = math.Floor(v * 5)
	}
	tabular := writeShuffledParts(t, filepath.Join(dir, "tabular"), tab, 10)
	prepareBoth(t, dir, "tabular", []string{tabular}, "--features", "tabular", "--state", "s2")

	// The prepared file reads back as the input's table, trajectories
	// renumbered.
	mem := filepath.Join(dir, "labelled-mem.parquet")
	want, err := parquetio.Read(context.Background(), []string{labels}, traj.Options{State: traj.StateSpec{Columns: []string{"s1", "s2", "s3"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := parquetio.Read(context.Background(), []string{mem}, traj.Options{State: traj.StateSpec{Columns: []string{"s1", "s2", "s3"}}})
	if err != nil {
		t.Fatal(err)
	}
	got.Sources, want.Sources = nil, nil
	if fmt.Sprintf("%#v", *got) != fmt.Sprintf("%#v", *want) {
		t.Error("the prepared labelled rows read back as another table")
	}
}

// TestPrepareOutOfCoreAutomatic: when the rows would not fit in
// --max-memory but a pair of steps does, prepare streams by itself, says
// so, and writes the in-memory bytes.
func TestPrepareOutOfCoreAutomatic(t *testing.T) {
	dir := t.TempDir()
	c := simulatedChunk(t, dir, "1500,2000,3000,1000,2500")
	data := writeShuffledParts(t, filepath.Join(dir, "data"), labelled(c), 3)
	mem, auto := filepath.Join(dir, "mem.parquet"), filepath.Join(dir, "auto.parquet")
	want := mustRun(t, "prepare", "--max-memory", "0", "-o", mem, data)
	code, got, stderr := grmdp(t, "prepare", "--max-memory", "140MB", "-o", auto, data)
	if code != 0 || !strings.Contains(stderr, "preparing out of core instead") {
		t.Fatalf("prepare --max-memory 140MB: exit %d, stderr:\n%s", code, stderr)
	}
	if strings.ReplaceAll(got, auto, mem) != want {
		t.Errorf("prepare --max-memory 140MB printed\n%s\nwithout a limit:\n%s", got, want)
	}
	a, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(auto); err != nil || !bytes.Equal(a, b) {
		t.Errorf("prepare --max-memory 140MB wrote other bytes than in memory (%v)", err)
	}
	// Not even a pair of steps fits: the refusal of the in-memory path.
	code, _, stderr = grmdp(t, "prepare", "--max-memory", "130MB", "-o", filepath.Join(dir, "x.parquet"), data)
	checkFailure(t, code, stderr, exitBadData, "", "--max-memory 130MB", "rows need about")
}

// prepareFails runs prepare in memory and out of core on data and checks
// that both fail with the same exit code and message, leaving nothing in
// the output directory; it returns the message.
func prepareFails(t *testing.T, name string, data ...string) string {
	t.Helper()
	out := t.TempDir()
	code, _, want := grmdp(t, append([]string{"prepare", "-o", filepath.Join(out, "mem.parquet")}, data...)...)
	checkFailure(t, code, want, exitBadData, out)
	code, _, got := grmdp(t, append([]string{"prepare", "--out-of-core", "-o", filepath.Join(out, "mem.parquet")}, data...)...)
	checkFailure(t, code, got, exitBadData, out)
	if got != want {
		t.Errorf("%s: prepare --out-of-core fails with\n%s\nin memory with\n%s", name, got, want)
	}
	return want
}

// TestPrepareOutOfCoreErrors: a gap or a duplicate row fails prepare out
// of core with the in-memory message: the corpus's cases, and inputs with several defects, where the
// in-memory reader reports the first duplicate in step order before any
// gap, and otherwise the first gap.
func TestPrepareOutOfCoreErrors(t *testing.T) {
	for _, name := range []string{"gap.parquet", "duplicate.parquet"} {
		msg := prepareFails(t, name, bad(name))
		if !strings.Contains(msg, strings.TrimSuffix(name, ".parquet")) {
			t.Errorf("%s: prepare fails with %q", name, msg)
		}
	}

	dir := t.TempDir()
	c := simulatedChunk(t, dir, "20,30,25,10,15")
	// traj returns the id of site's k-th trajectory of full length (ids
	// number trajectories across sites; simulatedChunk cuts every third
	// one short).
	traj := func(site int64, k int) int64 {
		var ids []int64
		for i := range c.Len() {
			if c.SiteInt[i] == site && c.TrajInt[i]%3 != 1 && !slices.Contains(ids, c.TrajInt[i]) {
				ids = append(ids, c.TrajInt[i])
			}
		}
		slices.Sort(ids)
		return ids[k]
	}
	// row finds the row of (site, traj, step).
	row := func(site, traj, step int64) int {
		for i := range c.Len() {
			if c.SiteInt[i] == site && c.TrajInt[i] == traj && c.Step[i] == step {
				return i
			}
		}
		t.Fatalf("no row for site %d, traj %d, step %d", site, traj, step)
		return -1
	}
	dupMsg := func(site, traj, step int64) string {
		return fmt.Sprintf("duplicate row for site %d, traj %d, step %d", site, traj, step)
	}
	gapMsg := func(site, traj, step int64) string {
		return fmt.Sprintf("site %d, traj %d has a row at step %d but none at step %d", site, traj, step, step-1)
	}
	a, b, e, f := traj(2, 3), traj(3, 5), traj(1, 2), traj(5, 2)
	g, z := traj(4, 1), traj(5, 0)
	type defect struct {
		drop, dup []int // rows to drop, rows to repeat
		want      string
	}
	for name, d := range map[string]defect{
		"gap, later duplicate":  {drop: []int{row(2, a, 2)}, dup: []int{row(3, b, 5)}, want: dupMsg(3, b, 5)},
		"duplicate, later gap":  {drop: []int{row(2, a, 5)}, dup: []int{row(1, e, 2)}, want: dupMsg(1, e, 2)},
		"two duplicates":        {dup: []int{row(5, z, 4), row(1, e, 3)}, want: dupMsg(1, e, 3)},
		"two gaps":              {drop: []int{row(3, b, 4), row(5, f, 2)}, want: gapMsg(5, f, 3)},
		"gaps in one step":      {drop: []int{row(5, f, 3), row(2, a, 3)}, want: gapMsg(2, a, 4)},
		"late first row":        {drop: []int{row(4, g, 1), row(4, g, 2)}, want: gapMsg(4, g, 3)},
		"late first row, later": {drop: []int{row(4, g, 1), row(4, g, 2)}, dup: []int{row(2, a, 6)}, want: dupMsg(2, a, 6)},
	} {
		var idx []int
		for i := range c.Len() {
			if !slices.Contains(d.drop, i) {
				idx = append(idx, i)
			}
		}
		idx = append(idx, d.dup...)
		sub := strings.ReplaceAll(name, " ", "-")
		data := writeShuffledParts(t, filepath.Join(dir, sub), c.Select(idx), 11)
		if msg := prepareFails(t, name, data); !strings.Contains(msg, d.want) {
			t.Errorf("%s: prepare fails with %q, want it to mention %q", name, msg, d.want)
		}
	}
}

// TestPrepareOutOfCoreCorpus runs prepare in memory and out of core on
// every input of the bad-input corpus with three feature maps: both must
// exit alike, print the same lines and, when they succeed, write the same
// bytes.
func TestPrepareOutOfCoreCorpus(t *testing.T) {
	entries, err := os.ReadDir(badDir)
	if err != nil {
		t.Fatalf("no corpus at %s: %v", badDir, err)
	}
	out := t.TempDir()
	mem, ooc := filepath.Join(out, "mem.parquet"), filepath.Join(out, "ooc.parquet")
	ran := map[bool]int{}
	for _, e := range entries {
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".parquet") {
			continue
		}
		for _, feat := range []string{"action-block", "tabular", "precomputed"} {
			name := e.Name() + " " + feat
			code, stdout, stderr := grmdp(t, "prepare", "--features", feat, "-o", mem, bad(e.Name()))
			code2, stdout2, stderr2 := grmdp(t, "prepare", "--features", feat, "--out-of-core", "-o", ooc, bad(e.Name()))
			if code2 != code || strings.ReplaceAll(stdout2, ooc, mem) != stdout || stderr2 != stderr {
				t.Errorf("%s: out of core: exit %d, stdout %q, stderr %q; in memory: exit %d, stdout %q, stderr %q",
					name, code2, stdout2, stderr2, code, stdout, stderr)
				continue
			}
			ran[code == 0]++
			if code == 0 {
				a, err := os.ReadFile(mem)
				if err != nil {
					t.Fatal(err)
				}
				if b, err := os.ReadFile(ooc); err != nil || !bytes.Equal(a, b) {
					t.Errorf("%s: prepare --out-of-core wrote other bytes than in memory (%v)", name, err)
				}
			}
			os.Remove(mem)
			os.Remove(ooc)
		}
	}
	t.Logf("%d successes, %d failures", ran[true], ran[false])
	if ran[true] < 4 || ran[false] < 40 {
		t.Errorf("the corpus exercised too little: %d successes, %d failures", ran[true], ran[false])
	}
}
