package dataset

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// ApplyOptions say how to read the data a policy is applied to.
type ApplyOptions struct {
	// Step and Action name the step and action columns ("" for the
	// defaults); Site names the site column the summary counts by; under
	// a null policy, Site and Traj name the episodes a NULL cuts.
	Step, Action, Site, Traj string
	// FirstStep says how the steps are numbered.
	FirstStep traj.FirstStep
	// Nulls says what to do with a row with a NULL state: NullsError
	// refuses it; NullsTruncate keeps it and its episode's later rows,
	// NullsDropEpisode every row of its episode, without a recommendation
	// (NULL recommended_action and recommended_q, evidence false, and the
	// reason in recommendation_note).
	Nulls   traj.NullPolicy
	Workers int
	// Summary reads the output back and summarises it ([ApplySummary]).
	Summary bool
	// Note receives notes on how the data were read; nil drops them.
	Note func(Note)
}

// Apply adds the policy's recommended action, its Qhat and the evidence
// flag to every row of the data at paths and writes them to out. It
// returns the share of scored rows without evidence
// (ApplySummary.NoEvidenceShare); with o.Summary also what the policy
// recommends on the data, overall and per site.
func Apply(ctx context.Context, paths []string, p *solve.Policy, out string, o ApplyOptions) (*ApplySummary, error) {
	if len(paths) == 0 {
		return nil, optionErr("paths", "", "no data given: name one or more Parquet files, directories or globs")
	}
	if err := o.checkRoles(p.Map.StateColumns); err != nil {
		return nil, err
	}
	opts := traj.Options{
		Columns: traj.Columns{Step: o.Step, Action: o.Action},
		State:   policyStateSpec(p), Horizon: p.H, Actions: p.A, ActionLabels: p.ActionLabels, Workers: o.Workers,
		FirstStep: o.FirstStep, Nulls: o.Nulls,
	}
	if o.Nulls != traj.NullsError {
		opts.Columns.Site, opts.Columns.Traj = o.Site, o.Traj
	}
	var zeroStepFile string
	if opts.FirstStep == traj.StepsDetect {
		var err error
		if opts.FirstStep, zeroStepFile, err = parquetio.DetectFirstStep(ctx, paths, opts); err != nil {
			return nil, err
		}
	}
	if err := parquetio.CheckActions(ctx, paths, opts); err != nil {
		return nil, err
	}
	setReadingHeadroom()
	stop := timing.Start(ctx, "read, recommend and write")
	var scored, noev, unseen atomic.Int64
	err := parquetio.Annotate(ctx, paths, out, opts, p.ActionLabels, recommender(p, &scored, &noev, &unseen))
	stop()
	if err != nil {
		return nil, err
	}
	(&Options{Note: o.Note}).prepNotes(zeroStepFile, nil)
	var share float64
	if n := scored.Load(); n > 0 {
		share = float64(noev.Load()) / float64(n)
	}
	var unseenCells *int64
	if p.EvidenceCounts != nil {
		n := unseen.Load()
		unseenCells = &n
	}
	if !o.Summary {
		return &ApplySummary{Output: out, NoEvidenceShare: share, UnseenCells: unseenCells}, nil
	}
	sum, err := summarize(ctx, out, o.Site, opts.Columns.WithDefaults().Action, p)
	if err != nil {
		return nil, err
	}
	sum.NoEvidenceShare, sum.UnseenCells = share, unseenCells
	return sum, nil
}

// checkRoles returns a [*traj.RoleError] when a column plays two of the
// roles Apply reads, as [Open] refuses one ([traj.Columns.Check]): the
// site column (when named), the episode column (when named, under a null
// policy), the step and action columns (with their defaults) and the
// policy's state columns. Apply reads no reward.
func (o ApplyOptions) checkRoles(state []string) error {
	c := traj.Columns{Step: o.Step, Action: o.Action}.WithDefaults()
	type role struct{ role, col string }
	var roles []role
	if o.Site != "" {
		roles = append(roles, role{"site", o.Site})
	}
	if o.Traj != "" && o.Nulls != traj.NullsError {
		roles = append(roles, role{"traj", o.Traj})
	}
	roles = append(roles, role{"step", c.Step}, role{"action", c.Action})
	for _, col := range state {
		roles = append(roles, role{"state", col})
	}
	seen := map[string]string{}
	for _, r := range roles {
		if prev, ok := seen[r.col]; ok {
			return &traj.RoleError{Column: r.col, Roles: [2]string{prev, r.role}}
		}
		seen[r.col] = r.role
	}
	return nil
}

// MostlyFallback is the share of decisions without evidence from which a
// policy's recommendations are said to be mostly its fallback.
const MostlyFallback = 0.5

// policyStateSpec is the reader's description of the policy's state.
func policyStateSpec(p *solve.Policy) traj.StateSpec {
	spec := traj.StateSpec{Columns: p.Map.StateColumns}
	switch p.Map.Kind {
	case features.Tabular:
		spec.Integer, spec.Max = true, p.Map.S
	case features.Indicator:
		spec.Integer, spec.Max = true, 3
	case features.ActionBlock:
		spec.NonzeroSum = true
	case features.Precomputed:
		spec.List, spec.D = true, p.Map.D
	}
	return spec
}

// recommender fills, for a chunk of rows, the policy's action, its Qhat and
// the evidence flag, counting the rows it scores, those without evidence
// and those whose state cell has no rows at their step in the policy's
// data (solve.Policy.CellRows; none when the policy holds no counts).
func recommender(p *solve.Policy, scored, noev, unseen *atomic.Int64) func(steps []int64, state []float64, width int, action []int32, q []float64, evidence []bool) error {
	w := p.Map.Width()
	return func(steps []int64, state []float64, width int, action []int32, q []float64, evidence []bool) error {
		if width != w {
			return badInputf("the data's state has width %d but the policy's %s map needs %d: the policy was learned on other features", width, p.Map.Kind, w)
		}
		d := p.NewDecider()
		var n, u int64
		for i, h := range steps {
			s := state[i*w : (i+1)*w]
			a, v, ev := d.Act(int(h), s)
			action[i], q[i], evidence[i] = int32(a), v, ev
			if !ev {
				n++
			}
			if rows, ok := p.CellRows(int(h), s); ok && rows == 0 {
				u++
			}
		}
		scored.Add(int64(len(steps)))
		noev.Add(n)
		unseen.Add(u)
		return nil
	}
}

// ApplySummary is what a policy recommends on the data, overall and per
// site.
type ApplySummary struct {
	Output string `json:"output"`
	// NoEvidenceShare is the share of the scored rows whose decision has
	// no evidence and follows the fallback (as solve's diagnostics
	// no_evidence_share counts the data's decisions).
	NoEvidenceShare float64 `json:"no_evidence_share"`
	// UnseenCells counts the scored rows whose state cell has no rows at
	// their step in the data the policy was learned from (across sites,
	// as released under its disclosure control): they have no evidence
	// and take the policy's fallback, under the behaviour fallback the
	// step's most frequent action (over all steps when the step has no
	// rows), as solve decides such a cell. Null for policies without
	// evidence counts (maps other than tabular and binned).
	UnseenCells *int64 `json:"unseen_cells"`
	ApplyCounts
	// Sites holds the same per site, in site order (numeric when every
	// site is an integer, lexical otherwise); empty when the data have no
	// site column.
	Sites []ApplySite `json:"sites"`
}

// ApplySite is one site's [ApplyCounts].
type ApplySite struct {
	Site string `json:"site"`
	ApplyCounts
}

// ApplyCounts summarises a set of annotated rows.
type ApplyCounts struct {
	Rows int64 `json:"rows"`
	// Recommended counts the rows per recommended action, in the policy's
	// action order.
	Recommended []ActionCount `json:"recommended"`
	// Agreement is the share of the rows with a recorded action whose
	// recommended action equals it; null when the data have no action
	// column or no row records one.
	Agreement *float64 `json:"agreement"`
	// NoEvidence is the share of the scored rows whose decision has no
	// evidence (every action's Qhat is 0) and follows the fallback.
	NoEvidence float64 `json:"no_evidence"`
	// Unscored counts the rows left without a recommendation (--nulls: a
	// NULL state, or a row of an episode cut at one).
	Unscored int64 `json:"unscored"`

	recorded, agree, noev int64
	byAction              map[string]int64
}

// ActionCount is the number of rows recommended one action.
type ActionCount struct {
	Action string `json:"action"`
	Rows   int64  `json:"rows"`
}

func (c *ApplyCounts) add(r *parquetio.AnnotatedRow) {
	c.Rows++
	if !r.Scored {
		c.Unscored++
		return
	}
	if c.byAction == nil {
		c.byAction = map[string]int64{}
	}
	rec := r.Recommended
	if _, ok := c.byAction[rec]; !ok {
		rec = strings.Clone(rec) // it may point into a batch's buffer
	}
	c.byAction[rec]++
	if r.HasRecorded {
		c.recorded++
		if r.Recorded == rec {
			c.agree++
		}
	}
	if !r.Evidence {
		c.noev++
	}
}

// finish fills the shares and the per-action list.
func (c *ApplyCounts) finish(labels []string) {
	c.Recommended = []ActionCount{}
	for _, l := range labels {
		c.Recommended = append(c.Recommended, ActionCount{Action: l, Rows: c.byAction[l]})
	}
	if c.recorded > 0 {
		a := float64(c.agree) / float64(c.recorded)
		c.Agreement = &a
	}
	if n := c.Rows - c.Unscored; n > 0 {
		c.NoEvidence = float64(c.noev) / float64(n)
	}
}

// summarize reads the annotated file apply wrote and summarises it.
func summarize(ctx context.Context, path, siteCol, actionCol string, p *solve.Policy) (*ApplySummary, error) {
	all := &ApplySummary{Output: path}
	bySite := map[string]*ApplySite{}
	err := parquetio.ReadAnnotated(ctx, path, siteCol, actionCol, func(r *parquetio.AnnotatedRow) {
		all.add(r)
		if r.HasSite {
			st := bySite[r.Site]
			if st == nil {
				s := strings.Clone(r.Site)
				st = &ApplySite{Site: s}
				bySite[s] = st
			}
			st.add(r)
		}
	})
	if err != nil {
		return nil, err
	}
	labels := actionLabels(p)
	all.finish(labels)
	all.Sites = []ApplySite{}
	for _, s := range sortedSites(bySite) {
		st := bySite[s]
		st.finish(labels)
		all.Sites = append(all.Sites, *st)
	}
	return all, nil
}

// actionLabels names the policy's actions.
func actionLabels(p *solve.Policy) []string {
	out := make([]string, p.A)
	for a := range out {
		out[a] = p.ActionLabel(a)
	}
	return out
}

// sortedSites returns the sites in numeric order when every one is an
// integer, lexical order otherwise.
func sortedSites[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	numeric := true
	for s := range m {
		out = append(out, s)
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			numeric = false
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if numeric {
			x, _ := strconv.ParseInt(a, 10, 64)
			y, _ := strconv.ParseInt(b, 10, 64)
			return cmp.Compare(x, y)
		}
		return cmp.Compare(a, b)
	})
	return out
}
