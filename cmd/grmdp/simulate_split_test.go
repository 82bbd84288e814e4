//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// simulateSplit runs simulate with extra flags, writing DIR/all.parquet and
// each site's rows to DIR/sites/hospital-<site>/data.parquet, and returns
// the data file, the site names (in the order simulate reports them) and
// their folders.
func simulateSplit(t *testing.T, dir string, args ...string) (data string, names, dirs []string) {
	t.Helper()
	data = filepath.Join(dir, "all.parquet")
	prefix := filepath.Join(dir, "sites", "hospital-")
	out := mustRun(t, append([]string{"simulate", "-o", data, "--split-sites", prefix}, args...)...)
	for _, line := range strings.Split(out, "\n") {
		var path, site string
		if _, err := fmt.Sscanf(line, "wrote %s site %s", &path, &site); err == nil {
			site = strings.TrimSuffix(site, ",")
			names, dirs = append(names, site), append(dirs, prefix+site)
			if want := filepath.Join(prefix+site, "data.parquet") + ":"; path != want {
				t.Fatalf("simulate reports site %s's file as %s, want %s", site, path, want)
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("simulate --split-sites reports no site file:\n%s", out)
	}
	return data, names, dirs
}

// parquetRows returns a Parquet file's Arrow schema (with the columns'
// types) and its rows, each value printed exactly (floats in hex).
func parquetRows(t *testing.T, path string) (string, [][]string) {
	t.Helper()
	fr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	ar, err := pqarrow.NewFileReader(fr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := ar.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	rows := make([][]string, tbl.NumRows())
	for c := 0; c < int(tbl.NumCols()); c++ {
		r := 0
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				v := chunk.ValueStr(i)
				if f, ok := chunk.(*array.Float64); ok {
					v = fmt.Sprintf("%x", f.Value(i))
				}
				rows[r] = append(rows[r], v)
				r++
			}
		}
	}
	return tbl.Schema().String(), rows
}

// TestSimulateSplitSites: simulate --split-sites writes one folder per
// site whose file holds that site's rows of the -o file: the same schema
// (column names and types: integer sites, the state columns), and the site
// files one after the other are the -o file's rows in its order, value for
// value (trajectory ids included). solve on the folders gives the policy of
// solve on the -o file, bit for bit. Checked on a float state (benchmark,
// action-block) and an integer one (formulary, tabular).
func TestSimulateSplitSites(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		sim      []string
		spec     traj.StateSpec
		solve    []string
	}{
		{"benchmark", []string{"--trajectories", "40,30,50", "--seed", "4"}, traj.StateSpec{Columns: benchCols, NonzeroSum: true},
			[]string{"--features", "action-block", "--state", "s1,s2,s3", "--method", "sitewise"}},
		{"formulary", []string{"--trajectories", "60,40,30", "--horizon", "4", "--seed", "2"}, traj.StateSpec{Columns: []string{"state"}, Integer: true},
			[]string{"--features", "tabular", "--state", "state", "--method", "pooled"}},
	} {
		dir := t.TempDir()
		data, names, dirs := simulateSplit(t, dir, append([]string{"--scenario", tc.scenario}, tc.sim...)...)
		if want := []string{"1", "2", "3"}; !slices.Equal(names, want) {
			t.Fatalf("%s: sites %v, want %v", tc.scenario, names, want)
		}
		schema, all := parquetRows(t, data)
		var union [][]string
		for i, d := range dirs {
			s, rows := parquetRows(t, filepath.Join(d, "data.parquet"))
			if s != schema {
				t.Errorf("%s: site %s's file has schema\n%s\nthe -o file\n%s", tc.scenario, names[i], s, schema)
			}
			for _, r := range rows {
				if r[0] != names[i] {
					t.Fatalf("%s: site %s's file holds a row of site %s", tc.scenario, names[i], r[0])
				}
			}
			union = append(union, rows...)
		}
		if len(union) != len(all) {
			t.Fatalf("%s: the site files hold %d rows, the -o file %d", tc.scenario, len(union), len(all))
		}
		for i := range all {
			if !slices.Equal(union[i], all[i]) {
				t.Fatalf("%s: row %d is %v in the site files, %v in the -o file", tc.scenario, i, union[i], all[i])
			}
		}

		central, split := filepath.Join(dir, "central.parquet"), filepath.Join(dir, "split.parquet")
		mustRun(t, append(append([]string{"solve", "-o", central}, tc.solve...), data)...)
		mustRun(t, append(append([]string{"solve", "-o", split}, tc.solve...), dirs...)...)
		want, got := readPolicyT(t, central), readPolicyT(t, split)
		samePolicies(t, tc.scenario, want, got)
		tb, err := parquetio.Read(context.Background(), []string{data}, traj.Options{State: tc.spec})
		if err != nil {
			t.Fatal(err)
		}
		sameDecisions(t, tc.scenario, tb, want, got)
	}
}

// A simulate --split-sites run that fails writing a site's file (here the
// second) leaves nothing: no data file, model or site file, no temporary
// file and none of the folders it created; a folder that was there before
// stays, with what it held.
func TestSimulateSplitSitesFailure(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "hospital-3")
	if err := os.Mkdir(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(keep, "notes.txt"), "kept")
	calls := 0
	defer func(w func(string, *traj.Table, parquetio.WriteOptions) error) { writeTrajectories = w }(writeTrajectories)
	real := writeTrajectories
	writeTrajectories = func(path string, tb *traj.Table, o parquetio.WriteOptions) error {
		if calls++; calls == 3 {
			return errors.New("disk full")
		}
		return real(path, tb, o)
	}
	code, _, stderr := grmdp(t, "simulate", "--trajectories", "20,20,20", "-o", filepath.Join(dir, "out", "all.parquet"),
		"--model-out", filepath.Join(dir, "model.json"), "--split-sites", filepath.Join(dir, "hospital-"))
	if code == 0 || !strings.Contains(stderr, "disk full") {
		t.Fatalf("exit %d, stderr %q: want the write's failure", code, stderr)
	}
	if calls != 3 {
		t.Fatalf("%d writes, want the third to fail", calls)
	}
	var left []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			left = append(left, rel)
		}
		return err
	})
	if want := []string{"hospital-3", filepath.Join("hospital-3", "notes.txt")}; !slices.Equal(left, want) {
		t.Errorf("a failed run left %v, want only %v", left, want)
	}
}
