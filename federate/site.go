package federate

import (
	"context"
	"fmt"
	"slices"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// SiteInput is what a site's part needs besides the job: its statistics
// (read and validated as solve reads data, under the site's disclosure
// control), its name, whether its site column is an integer column, and
// its data files' provenance. For a precomputed map SiteMessage forms the
// statistics again when their blocks are not the ones the round needs (the
// site's own in round 0, the job's after).
type SiteInput struct {
	Stats   *solve.Stats
	Site    string
	Numeric bool
	Sources []traj.Source
	// StepRows, when not nil, is the number of the site's rows at each
	// step of its whole data, for Stats formed from a window of it
	// (traj.Table.Window); nil takes them from Stats' table.
	StepRows []int
}

// SiteMessage computes site's message for the job's current round: the
// Gram, released counts and behaviour counts of the round's step, and the
// right-hand side of every run the site is in, from Vhat at the next step
// under the coefficients the state carries. Nothing row-level leaves.
func SiteMessage(ctx context.Context, j *Job, s *State, in SiteInput) (*Message, error) {
	if s.Done(j) {
		return nil, fmt.Errorf("federate: job %s is finished (all %d rounds folded): nothing to send", j.ID, j.Rounds())
	}
	st, err := in.check(ctx, j, s)
	if err != nil {
		return nil, err
	}
	dc := st.Disclosure()
	r := s.Round
	if j.ValueRound(r) {
		return valueMessage(ctx, j, s, in)
	}
	h := j.StepOf(r)
	tot, err := totalsOf(st, in.StepRows)
	if err != nil {
		return nil, err
	}
	m := &Message{FormatVersion: FormatVersion, JobID: j.ID, Round: r, Step: h, Site: in.Site, Map: j.Map, Numeric: in.Numeric,
		Trajectories: tot.Trajectories, Rows: tot.Rows, Weighted: tot.Weighted, Disclosure: dc, Sources: in.Sources}
	m.StepRows = st.CellRows(h, 0)
	m.Silent, m.Suppressed = st.Suppressed(h, 0)
	if m.Gram, m.GramRows, err = siteGrams(ctx, j, st, h); err != nil {
		return nil, err
	}
	if j.Map.Kind == features.Precomputed {
		m.Blocks = labelsOf(&st.Layout)
	}
	for _, c := range st.Counts(h, 0) {
		m.Counts = append(m.Counts, float64(c))
	}
	m.Behaviour = st.BehaviourCounts(h, 0)
	// The site's passes: its own rows are site 0 of every run it is in.
	var passes []solve.Pass
	var next []*solve.StepCoef
	for _, name := range siteRuns(j, in.Site) {
		pass := solve.Pass{Name: name, Groups: [][]int{{0}}, PEVI: pevi(j.Method)}
		if r > 0 {
			run := s.run(name)
			if run == nil || run.Steps[h] == nil {
				return nil, refusef("the job's state lacks run %s's step %d", name, h+1)
			}
			pass.PEVI, pass.Beta = run.PEVI, run.Beta
			next = append(next, run.Steps[h])
		}
		passes = append(passes, pass)
	}
	rd := solve.Round{Passes: passes, Settings: settingsOf(j)}
	rhs, err := rd.RHS(ctx, st, h, next)
	if err != nil {
		return nil, err
	}
	for i, pass := range passes {
		m.Runs = append(m.Runs, pass.Name)
		m.RHS = append(m.RHS, rhs[i][0])
	}
	m.seal()
	return m, nil
}

// siteRuns names the runs site takes part in: its own for the per-site
// PEVI methods, the job's one run "all" otherwise (none for behaviour).
func siteRuns(j *Job, site string) []string {
	switch j.Method {
	case solve.Behaviour:
		return nil
	case solve.PEVIAvg, solve.PEVIMin:
		return []string{site}
	}
	return []string{"all"}
}

func (s *State) run(name string) *Run {
	for i := range s.Runs {
		if s.Runs[i].Name == name {
			return &s.Runs[i]
		}
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// check refuses a site's input that does not fit job j (another site, other
// sizes or map, thresholds below the job's) and sets in.Stats to the
// statistics the site's messages are formed from: for a precomputed map,
// under the job's joint blocks, as the central solve forms them from every
// row. It returns them.
func (in *SiteInput) check(ctx context.Context, j *Job, s *State) (*solve.Stats, error) {
	st := in.Stats
	t := st.Table
	if !contains(j.Sites, in.Site) {
		return nil, refusef("site %q is not one of job %s's sites %v", in.Site, j.ID, j.Sites)
	}
	if len(t.Sites) != 1 || t.Sites[0] != in.Site {
		return nil, refusef("the data hold sites %v; a site's part reads only its own rows, of site %q", t.Sites, in.Site)
	}
	if t.Actions != nil && j.Rules.ActionLabels == nil {
		return nil, fmt.Errorf("%w: the data's actions are %q", ErrLabelsNeeded, t.Actions)
	}
	if t.H != j.H || t.A != j.Map.A || !slices.Equal(t.Actions, j.Rules.ActionLabels) {
		return nil, refusef("the data have H = %d and A = %d (labels %q); the job has H = %d and A = %d (labels %q)", t.H, t.A, t.Actions, j.H, j.Map.A, j.Rules.ActionLabels)
	}
	if !sameMap(&st.Map, &j.Map) {
		return nil, refusef("the data were read with a %s map (%d features), the job's is %s (%d features)", st.Map.Kind, st.Map.Dim(), j.Map.Kind, j.Map.Dim())
	}
	dc := st.Disclosure()
	if dc.MinCount < j.Disclosure.MinCount || dc.MinRows < j.Disclosure.MinRows {
		return nil, refusef("the site's thresholds (min count %d, min rows %d) are below the job's (%d, %d)", dc.MinCount, dc.MinRows, j.Disclosure.MinCount, j.Disclosure.MinRows)
	}
	st, err := siteStats(ctx, j, s, st)
	if err != nil {
		return nil, err
	}
	in.Stats = st
	return st, nil
}

// totals is what a site's messages say of its size.
type totals struct {
	// Trajectories is the site's number of trajectories: its step-1 rows,
	// at least the min count (a smaller site cannot take part).
	Trajectories int
	// Rows is the site's rows over every step, less the rows of the steps
	// whose row count is not released (silent) when those number 1 to
	// 2 min count - 2; Exact says it is the whole count.
	Rows  int
	Exact bool
	// Weighted says the rows carry weights.
	Weighted bool
}

// totalsOf returns the totals a site's messages carry under its
// disclosure control. Every episode starts at step 1, so the trajectories
// are step 1's rows: the margin of its released cells, whose withheld part
// is 0 or at least the min count (solve's complementary suppression), and
// itself at least the min count, or the site refuses to take part. The
// rows over every step are the released steps' rows plus the silent
// steps' (whose row counts no message carries): sent whole when the latter
// are 0 or at least the min count, and without them otherwise.
func totalsOf(st *solve.Stats, stepRows []int) (totals, error) {
	t := st.Table
	K := st.Disclosure().MinCount
	tot := totals{Trajectories: t.Trajectories[0], Rows: t.Rows, Exact: true}
	if tot.Trajectories < K {
		return tot, refusef("site %q has %d trajectories, fewer than the min count %d: its totals would disclose a count below %d, so it cannot take part",
			t.Sites[0], tot.Trajectories, K, K)
	}
	// A step is silent by its number of rows alone (solve's cell rule),
	// so the totals are the same in every round, whichever steps the
	// round's statistics hold.
	dc := st.Disclosure()
	silent := 0
	for h := 1; h <= t.H; h++ {
		tot.Weighted = tot.Weighted || t.Steps[h-1].Weight != nil
		rows := t.Steps[h-1].Len()
		if stepRows != nil {
			rows = stepRows[h-1]
		}
		if dc.Active() && (rows < dc.MinRows || rows < K) {
			silent += rows
		}
	}
	// Under 2K-1 the silent rows would bound a small step's rows by the
	// total less K, as a margin's withheld parts do (solve's suppression).
	if silent > 0 && silent < 2*K-1 {
		tot.Rows -= silent
		tot.Exact = false
	}
	return tot, nil
}
