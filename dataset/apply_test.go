package dataset_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// TestApplyRefusesTwoRoles: a column named for two roles among those
// apply reads is refused before anything is read or written, naming both
// roles as Open does.
func TestApplyRefusesTwoRoles(t *testing.T) {
	ctx := context.Background()
	d, path := benchmarkData(t, 2)
	s := solve.DefaultSettings
	s.Workers = 2
	solved, err := d.Solve(ctx, s, solve.Problem{Method: solve.Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	p := solved.Policy
	cases := []struct {
		name   string
		o      dataset.ApplyOptions
		column string
		roles  [2]string
	}{
		{"site is the action", dataset.ApplyOptions{Site: "action"}, "action", [2]string{"site", "action"}},
		{"step is a state column", dataset.ApplyOptions{Site: "site", Step: "s2"}, "s2", [2]string{"step", "state"}},
		{"site is the episode under a null policy", dataset.ApplyOptions{Site: "traj", Traj: "traj", Nulls: traj.NullsTruncate}, "traj", [2]string{"site", "traj"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.parquet")
			_, err := dataset.Apply(ctx, []string{path}, p, out, c.o)
			var re *traj.RoleError
			if !errors.As(err, &re) || re.Column != c.column || re.Roles != c.roles {
				t.Fatalf("Apply: %v, want a RoleError for %q as %v", err, c.column, c.roles)
			}
		})
	}
	// The episode column is read only under a null policy. An
	// action-block policy holds no evidence counts: unseen_cells is null.
	sum, err := dataset.Apply(ctx, []string{path}, p, filepath.Join(t.TempDir(), "out.parquet"), dataset.ApplyOptions{Site: "site", Traj: "site"})
	if err != nil {
		t.Fatalf("Apply with the episode column unread: %v", err)
	}
	if sum.UnseenCells != nil {
		t.Errorf("unseen_cells %d for an action-block policy, want null", *sum.UnseenCells)
	}
}

// cellRow is one row of a hand-made tabular data set (one state column s,
// actions 0..2, reward 0.5).
type cellRow struct {
	site        string
	tr, h, s, a int
}

// writeCells writes rows as a data set of H steps whose state s is a
// tabular cell in 0..S-1.
func writeCells(t *testing.T, path string, S, H int, rows []cellRow) {
	t.Helper()
	b := traj.NewBuilder(traj.Options{State: traj.StateSpec{Columns: []string{"s"}, Integer: true, Max: S}, Actions: 3, Horizon: H})
	c := &traj.Chunk{Src: traj.Origin{File: path}, W: 1}
	for _, r := range rows {
		c.SiteStr = append(c.SiteStr, r.site)
		c.TrajInt = append(c.TrajInt, int64(r.tr))
		c.Step = append(c.Step, int64(r.h))
		c.ActionInt = append(c.ActionInt, int64(r.a))
		c.Reward = append(c.Reward, 0.5)
		c.State = append(c.State, float64(r.s))
	}
	if err := b.Add(c); err != nil {
		t.Fatal(err)
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := parquetio.WriteTrajectories(path, tb, parquetio.WriteOptions{StateColumns: []string{"s"}}); err != nil {
		t.Fatal(err)
	}
}

// TestApplyUnseenCells applies a tabular and a binned policy to rows in
// cells the policy's data never visit at their step. The hand-worked data
// (sites a and b alike, S = 4, H = 3):
//
//	step 1: state 0, action 2 x8; state 1, action 1 x3 (most frequent 2)
//	step 2: state 1, action 1 x4; state 0, action 0 x2 (most frequent 1)
//	step 3: no rows
//
// Over the steps the actions are counted 4, 14, 16 times: step 3 takes
// action 2. An unseen cell takes its step's most frequent action, as solve
// decides one (its behaviour table), and apply counts it in unseen_cells.
func TestApplyUnseenCells(t *testing.T) {
	dir := t.TempDir()
	var rows []cellRow
	tr := 0
	for _, site := range []string{"a", "b"} {
		for _, c := range []struct{ s1, a1, s2, a2, n int }{{0, 2, 1, 1, 4}, {0, 2, 0, 0, 2}, {0, 2, -1, 0, 2}, {1, 1, -1, 0, 3}} {
			for range c.n {
				rows = append(rows, cellRow{site, tr, 1, c.s1, c.a1})
				if c.s2 >= 0 {
					rows = append(rows, cellRow{site, tr, 2, c.s2, c.a2})
				}
				tr++
			}
		}
	}
	train := filepath.Join(dir, "train.parquet")
	writeCells(t, train, 4, 3, rows)
	// Episode 0 visits unseen cells only; episode 1 seen ones.
	test := []cellRow{{"a", 0, 1, 3, 0}, {"a", 0, 2, 2, 0}, {"a", 0, 3, 0, 0}, {"a", 1, 1, 0, 0}, {"a", 1, 2, 1, 0}}
	want := []int64{2, 1, 2}
	data := filepath.Join(dir, "test.parquet")
	writeCells(t, data, 4, 3, test)
	ctx := context.Background()
	// The binned map's cells are the tabular map's states.
	binned := features.Spec{Kind: features.Binned, StateColumns: []string{"s"}, Bins: []features.Bins{{Column: "s", Cuts: []float64{0.5, 1.5, 2.5}}}}
	for _, spec := range []features.Spec{{Kind: features.Tabular, StateColumns: []string{"s"}, S: 4}, binned} {
		d, err := dataset.Open(ctx, []string{train}, dataset.Options{Map: spec, Horizon: 3})
		if err != nil {
			t.Fatal(err)
		}
		solved, err := d.Solve(ctx, solve.DefaultSettings, solve.Problem{Method: solve.Sitewise})
		if err != nil {
			t.Fatal(err)
		}
		p := solved.Policy
		if p.Fallback != solve.FallbackBehaviour {
			t.Fatalf("%s: fallback %q, want behaviour", spec.Kind, p.Fallback)
		}
		applyUnseen(t, spec.Kind, p, data, filepath.Join(dir, spec.Kind.String()+".parquet"), test, want)
	}
}

// applyUnseen applies p to data, whose first len(want) rows (test) are in
// cells without rows at their step, and checks the recommendations there
// and the count of such rows, with and without the summary.
func applyUnseen(t *testing.T, kind features.Kind, p *solve.Policy, data, out string, test []cellRow, want []int64) {
	t.Helper()
	ctx := context.Background()
	for _, summary := range []bool{false, true} {
		sum, err := dataset.Apply(ctx, []string{data}, p, out, dataset.ApplyOptions{Site: "site", Summary: summary})
		if err != nil {
			t.Fatal(err)
		}
		if sum.UnseenCells == nil || *sum.UnseenCells != 3 {
			t.Errorf("%s, summary %v: unseen_cells %v, want 3", kind, summary, sum.UnseenCells)
		}
		var text bytes.Buffer
		if err := sum.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "3 scored rows are in state cells without rows") {
			t.Errorf("%s, summary %v: text lacks the unseen cells line:\n%s", kind, summary, text.String())
		}
		got := recommended(t, out)
		for i, a := range want {
			r := test[i]
			if got[i] != strconv.FormatInt(a, 10) {
				t.Errorf("%s: step %d, unseen state %d: recommended %s, want %d", kind, r.h, r.s, got[i], a)
			}
			if b := p.BehaviourAction[r.h-1][r.s]; int64(b) != a {
				t.Errorf("%s: step %d, unseen state %d: solve's behaviour table says %d, want %d", kind, r.h, r.s, b, a)
			}
		}
	}
}

// recommended reads the recommended actions apply wrote, in row order.
func recommended(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	err := parquetio.ReadAnnotated(context.Background(), path, "", "", func(r *parquetio.AnnotatedRow) {
		out = append(out, strings.Clone(r.Recommended))
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
