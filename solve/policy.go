package solve

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// Policy is a solved policy: everything needed to reproduce Qhat and pihat
// for any state, and the provenance a reviewer asks for.
type Policy struct {
	Method Method       `json:"method"`
	Map    features.Map `json:"feature_map"`
	H      int          `json:"H"`
	D      int          `json:"d"`
	A      int          `json:"actions"`
	// ActionLabels holds the string action labels, or nil when actions are
	// the integers 0..A-1.
	ActionLabels []string `json:"action_labels"`
	Lambda       float64  `json:"lambda"`
	// Beta is the penalty scale of the (first) run; C and Xi produced it
	// unless BetaGiven.
	Beta      float64 `json:"beta"`
	C         float64 `json:"c"`
	Xi        float64 `json:"xi"`
	BetaGiven bool    `json:"beta_given"`
	Groups    []Group `json:"groups"`
	// Runs holds the backward passes: one for Algorithm 1 and pevi-pooled,
	// one per site for pevi-avg and pevi-min (combined by the average or the
	// minimum of their Qhat), none for behaviour.
	Runs []PolicyRun `json:"-"`
	// Fallback is the rule for decisions without evidence.
	Fallback Fallback `json:"fallback"`
	// BehaviourAction holds, per step, the most frequent action per cell
	// for maps whose features are indicators of cells (see
	// [BehaviourCells]), or one action per step for the other maps; a
	// cell without counts takes the step's, a step without counts the
	// most frequent over all steps ([CompleteBehaviour]).
	BehaviourAction [][]int32 `json:"-"`
	// EvidenceCounts holds, for tabular and binned maps, per step the
	// weighted number of rows across sites at each (state cell, action):
	// EvidenceCounts[h-1][cell*A+a] (the features are indicators of
	// (cell, action), so this is the diagonal of the pooled Gram
	// sum phi phi^T, formed under the solve's disclosure control). It is
	// the count behind Qhat_h(cell, a). Nil for other maps and for
	// policies written before it was stored.
	EvidenceCounts [][]float64 `json:"-"`
	// BlockLabels holds the discovered blocks of a precomputed map.
	BlockLabels []int `json:"block_labels,omitempty"`
	// ValueEstimate is the mean of Vhat_1 over the data's initial states
	// (Algorithm 1 and pevi-pooled), NaN when not defined.
	ValueEstimate float64 `json:"value_estimate"`
	// Provenance.
	Version  string            `json:"version"`
	Settings map[string]string `json:"settings"`
	Sources  []traj.Source     `json:"sources"`
	Rows     int               `json:"rows"`
	Warnings []string          `json:"warnings,omitempty"`
	// Selection is the record of the cross-fitted choice of the settings
	// the policy was learned with (package dataset's Selection, as JSON),
	// nil when they were given.
	Selection json.RawMessage `json:"selection,omitempty"`

	// TrainedOn is the fingerprint of the rows the policy was learned
	// from, set by the caller that read them (package dataset's
	// RowsFingerprint); "" when unknown.
	TrainedOn string `json:"trained_on,omitempty"`

	layout *Layout
}

// PolicyRun is one backward pass of a policy.
type PolicyRun struct {
	Group string     `json:"group"`
	Beta  float64    `json:"beta"`
	Steps []StepCoef `json:"-"`
}

func (p *Policy) penalty() penalty {
	switch p.Method {
	case PEVIPooled, PEVIAvg, PEVIMin:
		return pevi
	}
	return featurewise
}

// Layout returns the packed block layout of Lambda^{-1} used by PEVI runs.
func (p *Policy) Layout() *Layout {
	if p.layout == nil {
		var b features.Blocks
		if p.BlockLabels != nil {
			b = features.NewBlocks(p.BlockLabels)
		} else {
			b = p.Map.Blocks()
		}
		l := NewLayout(b)
		p.layout = &l
	}
	return p.layout
}

// QValues sets q[a] = Qhat_h(state, a) for every action; q has length A.
// For pevi-avg and pevi-min it is the average or minimum of the per-site
// Qhat; for behaviour it is 1 at the behaviour action and 0 elsewhere.
func (p *Policy) QValues(h int, state []float64, q []float64) {
	var row phiRow
	row.prepare(&p.Map, state)
	p.qValues(h, &row, q)
}

// qValues is QValues on a row prepared for p's map: each run's Qhat
// ([StepCoef.qValues]), combined ([Policy.combineRuns]).
func (p *Policy) qValues(h int, row *phiRow, q []float64) {
	if p.Method == Behaviour {
		for a := range q {
			q[a] = 0
		}
		q[p.behaviourAction(h, row.state)] = 1
		return
	}
	top := float64(p.H - h + 1)
	kind := p.penalty()
	if len(p.Runs) == 1 {
		var l *Layout // a linear run's Qhat needs no layout
		if kind == pevi {
			l = p.Layout()
		}
		p.Runs[0].Steps[h-1].qValues(kind, p.Runs[0].Beta, top, l, row, q)
		return
	}
	// Each run's Qhat in stack buffers when they fit (no heap allocation
	// per row: apply calls this at every row).
	if len(p.Runs) <= 16 && len(p.Runs)*len(q) <= 256 {
		var buf [256]float64
		var rbuf [16][]float64
		for r := range p.Runs {
			rbuf[r] = buf[r*len(q) : (r+1)*len(q)]
		}
		p.runValues(h, row, rbuf[:len(p.Runs)], q)
		return
	}
	runs := make([][]float64, len(p.Runs))
	for r := range runs {
		runs[r] = make([]float64, len(q))
	}
	p.runValues(h, row, runs, q)
}

// runValues sets runs[r] to run r's Qhat and q to their combination.
func (p *Policy) runValues(h int, row *phiRow, runs [][]float64, q []float64) {
	top := float64(p.H - h + 1)
	kind, l := p.penalty(), p.Layout()
	for r := range runs {
		run := &p.Runs[r]
		run.Steps[h-1].qValues(kind, run.Beta, top, l, row, runs[r])
	}
	p.combineRuns(runs, q)
}

// Act returns the recommended action at step h in state, its Qhat, and
// whether the decision has evidence (some action's Qhat is positive).
// Ties go to the lowest action; without evidence the policy's Fallback
// decides.
func (p *Policy) Act(h int, state []float64, q []float64) (action int, value float64, evidence bool) {
	var row phiRow
	return p.act(h, state, q, &row)
}

// act is Act with the caller's scratch row.
func (p *Policy) act(h int, state []float64, q []float64, row *phiRow) (action int, value float64, evidence bool) {
	row.prepare(&p.Map, state)
	return p.actRow(h, row, q)
}

// actRow is Act on a row prepared for p's map.
func (p *Policy) actRow(h int, row *phiRow, q []float64) (action int, value float64, evidence bool) {
	p.qValues(h, row, q)
	return p.decide(h, row.state, q)
}

// combineRuns sets q to the runs' Qhat combined: the average for pevi-avg,
// the minimum for pevi-min, the only run's otherwise.
func (p *Policy) combineRuns(runs [][]float64, q []float64) {
	for r, qr := range runs {
		for a, qa := range qr {
			q[a] = p.foldRun(r, q[a], qa)
		}
	}
	for a := range q {
		q[a] = p.endRuns(q[a], len(runs))
	}
}

// foldRun adds run r's Qhat qa to acc, the earlier runs' combined: the
// first run's alone, then their minimum (pevi-min) or sum. The lazy
// decisions' bounds combine the same way, in the same order.
func (p *Policy) foldRun(r int, acc, qa float64) float64 {
	switch {
	case r == 0:
		return qa
	case p.Method == PEVIMin:
		return min(acc, qa)
	}
	return acc + qa
}

// endRuns completes the combination of n runs' Qhat in acc: their
// average for pevi-avg.
func (p *Policy) endRuns(acc float64, n int) float64 {
	if p.Method == PEVIAvg {
		return acc / float64(n)
	}
	return acc
}

// decide returns the recommended action, its Qhat and whether it has
// evidence, from q = Qhat_h(state, .) (see [Policy.Act]).
func (p *Policy) decide(h int, state []float64, q []float64) (action int, value float64, evidence bool) {
	best := argmax(q)
	if q[best] > 0 || p.Method == Behaviour {
		return best, q[best], true
	}
	if p.Fallback == FallbackBehaviour && p.BehaviourAction != nil {
		b := p.behaviourAction(h, state)
		return b, q[b], false
	}
	return best, q[best], false
}

// fromTable reports whether a decision of p with that evidence is its
// behaviour table's action, as [Policy.decide] takes it: every decision of
// behaviour cloning, and one without evidence under [FallbackBehaviour].
func (p *Policy) fromTable(evidence bool) bool {
	return p.BehaviourAction != nil && (p.Method == Behaviour || !evidence && p.Fallback == FallbackBehaviour)
}

func (p *Policy) behaviourAction(h int, state []float64) int {
	tab := p.BehaviourAction[h-1]
	if len(tab) == 1 {
		return int(tab[0])
	}
	s := behaviourCell(&p.Map, state)
	if s < 0 || s >= len(tab) {
		return 0
	}
	return int(tab[s])
}

// ActionLabel returns the label of action a.
func (p *Policy) ActionLabel(a int) string {
	if p.ActionLabels != nil {
		return p.ActionLabels[a]
	}
	return strconv.Itoa(a)
}

// Solve solves one method and returns its policy.
func (sv *Solver) Solve(ctx context.Context, prob Problem) (*Policy, error) {
	st := sv.st
	t := st.Table
	s := sv.settings
	d := st.Map.Dim()
	p := &Policy{
		Method: prob.Method, Map: st.Map, H: t.H, D: d, A: t.A, ActionLabels: t.Actions,
		Lambda: s.Lambda, C: s.C, Xi: s.Xi, BetaGiven: s.BetaSet, Fallback: s.Fallback,
		ValueEstimate: math.NaN(), Rows: t.Rows, layout: &st.Layout,
	}
	if p.Fallback == "" {
		p.Fallback = FallbackBehaviour
	}
	if st.Map.Kind == features.Precomputed {
		p.BlockLabels = make([]int, d)
		for i := range p.BlockLabels {
			p.BlockLabels[i] = int(st.Layout.Blocks.Of[i])
		}
	}
	for _, src := range t.Sources {
		p.Sources = append(p.Sources, src)
	}
	p.BehaviourAction = sv.behaviour()
	evc, err := sv.evidenceCounts(ctx)
	if err != nil {
		return nil, err
	}
	p.EvidenceCounts = evc
	groups, names, specs, err := sv.plan(prob)
	if err != nil {
		return nil, err
	}
	for i, members := range groups {
		g := Group{Name: names[i], idx: members}
		for _, k := range members {
			g.Sites = append(g.Sites, t.Sites[k])
			g.Trajectories += t.Trajectories[k]
		}
		p.Groups = append(p.Groups, g)
	}
	for i, spec := range specs {
		run, err := sv.backward(ctx, spec.groups, spec.kind, spec.beta)
		if err != nil {
			return nil, err
		}
		combined := prob.Method == PEVIAvg || prob.Method == PEVIMin
		name := "all"
		if combined {
			name = names[i]
		}
		p.Runs = append(p.Runs, PolicyRun{Group: name, Beta: spec.beta, Steps: run.Steps})
		if !combined {
			p.ValueEstimate = weightedMeanV1(run, &t.Steps[0])
		}
	}
	if len(p.Runs) > 0 {
		p.Beta = p.Runs[0].Beta
	}
	return p, nil
}

// plan returns prob's groups, their names and the backward passes its
// policy is made of (none for behaviour cloning), from [PlanFor].
func (sv *Solver) plan(prob Problem) (groups [][]int, names []string, specs []passSpec, err error) {
	t := sv.st.Table
	pl, err := PlanFor(prob, sv.settings, t.Sites, t.Trajectories, t.H, sv.st.Map.Dim())
	if err != nil {
		return nil, nil, nil, err
	}
	for _, g := range pl.Groups {
		groups = append(groups, g.idx)
		names = append(names, g.Name)
	}
	for _, ps := range pl.Passes {
		specs = append(specs, ps.spec())
	}
	return groups, names, specs, nil
}

// Plan is what a method solves over a list of sites: its groups and the
// backward passes its policy is made of (none for behaviour cloning).
type Plan struct {
	// Groups are the method's groups, each with its sites' names and
	// trajectory count, as a policy records them.
	Groups []Group
	Passes []Pass
}

// Pass is one backward pass of a plan: its groups (indices into the plan's
// sites, members ascending as given), its penalty and the penalty's
// scale beta, and the name its run has in a policy ("all", or the site's
// for pevi-avg and pevi-min).
type Pass struct {
	Name   string
	Groups [][]int
	PEVI   bool
	Beta   float64
	// Follow, when set, evaluates that policy (Vhat_h is Qhat_h at its
	// action) instead of taking the max; SiteNu also solves each site's
	// own regression at the pass's Vhat (the Delta_h diagnostics).
	Follow *Policy
	SiteNu bool
}

func (ps Pass) spec() passSpec {
	kind := featurewise
	if ps.PEVI {
		kind = pevi
	}
	return passSpec{groups: ps.Groups, kind: kind, beta: ps.Beta, follow: ps.Follow, siteNu: ps.SiteNu}
}

// PlanFor returns prob's plan over sites (in the solve's site order) with
// their trajectory counts, H steps and d features under the penalty
// settings of s: every group, its name, and every pass with its beta
// (c d H sqrt(zeta) with G the number of groups and Nmax the largest
// group's trajectories, or s.Beta when given). [Solver.Solve] solves this
// plan; a federated coordinator, which holds only the sites' names and
// counts, plans with it too.
func PlanFor(prob Problem, s Settings, sites []string, trajectories []int, H, d int) (*Plan, error) {
	K := len(sites)
	if len(trajectories) != K {
		return nil, fmt.Errorf("solve: %d sites and %d trajectory counts", K, len(trajectories))
	}
	var groups [][]int
	var names []string
	switch prob.Method {
	case Sitewise, PEVIAvg, PEVIMin:
		for k := range sites {
			groups = append(groups, []int{k})
			names = append(names, sites[k])
		}
	case Pooled, PEVIPooled, Behaviour:
		all := make([]int, K)
		for k := range all {
			all[k] = k
		}
		groups = [][]int{all}
		names = []string{"all"}
	case Cluster:
		if len(prob.Groups) == 0 {
			return nil, fmt.Errorf("solve: the cluster method needs a clustering of the sites")
		}
		groups = prob.Groups
		names = prob.GroupNames
		if names == nil {
			for i := range groups {
				names = append(names, "c"+strconv.Itoa(i+1))
			}
		}
	default:
		return nil, fmt.Errorf("solve: unknown method %q", prob.Method)
	}
	if err := checkGroups(groups, K); err != nil {
		return nil, err
	}
	pl := &Plan{}
	for i, members := range groups {
		g := Group{Name: names[i], idx: members}
		for _, k := range members {
			g.Sites = append(g.Sites, sites[k])
			g.Trajectories += trajectories[k]
		}
		pl.Groups = append(pl.Groups, g)
	}
	switch prob.Method {
	case Sitewise, Cluster, Pooled:
		pl.Passes = []Pass{{Name: "all", Groups: groups, Beta: s.BetaFor(d, H, trajectories, groups)}}
	case PEVIPooled:
		pl.Passes = []Pass{{Name: "all", Groups: groups, PEVI: true, Beta: s.BetaFor(d, H, trajectories, groups)}}
	case PEVIAvg, PEVIMin:
		for i, members := range groups {
			pl.Passes = append(pl.Passes, Pass{Name: names[i], Groups: [][]int{members}, PEVI: true, Beta: s.BetaFor(d, H, trajectories, [][]int{members})})
		}
	}
	return pl, nil
}

// Prepare runs the backward passes of every problem that are not cached
// yet, all in lockstep (one sweep over each step's rows per round for all
// of them), so that [Solver.Solve] then finds them: solving several
// methods costs about one read of the rows per round, not one per pass.
func (sv *Solver) Prepare(ctx context.Context, probs []Problem) error {
	var todo []passSpec
	var keys []runKey
	seen := map[runKey]bool{}
	for _, prob := range probs {
		_, _, specs, err := sv.plan(prob)
		if err != nil {
			return err
		}
		for _, spec := range specs {
			key := keyOfRun(spec.groups, spec.kind, spec.beta)
			if _, ok := sv.runs[key]; ok || seen[key] {
				continue
			}
			seen[key] = true
			todo = append(todo, spec)
			keys = append(keys, key)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	runs, err := sv.passes(ctx, todo)
	if err != nil {
		return err
	}
	if sv.runs == nil {
		sv.runs = map[runKey]*Run{}
	}
	for i, key := range keys {
		sv.runs[key] = runs[i]
	}
	return nil
}

func meanV1(run *Run) float64 {
	if run.Rows == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, v := range run.V1 {
		s += v
	}
	return s / run.Rows
}

func checkGroups(groups [][]int, K int) error {
	seen := make([]bool, K)
	for _, g := range groups {
		if len(g) == 0 {
			return fmt.Errorf("solve: a group has no sites")
		}
		for _, k := range g {
			if k < 0 || k >= K {
				return fmt.Errorf("solve: group names site index %d of %d", k, K)
			}
			if seen[k] {
				return fmt.Errorf("solve: site index %d is in two groups", k)
			}
			seen[k] = true
		}
	}
	for k, ok := range seen {
		if !ok {
			return fmt.Errorf("solve: site index %d is in no group", k)
		}
	}
	return nil
}

// behaviour returns the behaviour fallback's table per step: the most
// frequent action per (step, cell) for maps whose features are indicators
// of cells (see [BehaviourCells]), or per step for the other maps; ties go
// to the lowest action. A cell never seen at a step takes the step's most
// frequent action, and a step where no action has any count the most
// frequent action over all steps ([CompleteBehaviour]).
func (sv *Solver) behaviour() [][]int32 {
	if sv.beh != nil {
		return sv.beh
	}
	t := sv.st.Table
	tabs := make([][]int32, t.H)
	acts := make([][]float64, t.H)
	// Steps in parallel, each counted serially: the same sums for any
	// number of workers.
	var g errgroup.Group
	g.SetLimit(workers.Or(sv.settings.Workers))
	for h := 1; h <= t.H; h++ {
		g.Go(func() error {
			tabs[h-1], acts[h-1] = sv.behaviourStep(h)
			return nil
		})
	}
	g.Wait()
	sv.beh = CompleteBehaviour(tabs, acts)
	return sv.beh
}

// behaviourStep returns step h's behaviour table without the over-steps
// level and the step's counts per action (see [BehaviourTable]): from the
// rows, or under disclosure control from the sites' released counts.
func (sv *Solver) behaviourStep(h int) ([]int32, []float64) {
	if sv.st.mask != nil {
		return sv.st.behaviourDisclosed(h)
	}
	return behaviourAt(sv.st.Table, &sv.st.Map, h)
}

// HasEvidenceCounts reports whether maps of kind k carry per-(cell, action)
// evidence counts: tabular and binned, whose features are indicators of
// (cell, action).
func HasEvidenceCounts(k features.Kind) bool {
	return k == features.Tabular || k == features.Binned
}

// evidenceCounts returns [Policy.EvidenceCounts] for the solver's table:
// per step, the diagonal of the Grams summed over sites in site order
// (nil for maps without them).
func (sv *Solver) evidenceCounts(ctx context.Context) ([][]float64, error) {
	if sv.evc != nil || !HasEvidenceCounts(sv.st.Map.Kind) || !sv.st.Layout.Blocks.Diagonal() {
		return sv.evc, nil
	}
	out := make([][]float64, sv.st.Table.H)
	for h := 1; h <= len(out); h++ {
		grams, err := sv.st.StepGrams(ctx, h)
		if err != nil {
			return nil, err
		}
		out[h-1] = gramDiagonal(sv.st.Map.Dim(), grams)
	}
	sv.evc = out
	return out, nil
}

// gramDiagonal sums the sites' Grams of a diagonal layout (one coordinate
// per block, so Packed[i] is Gram_ii) in site order.
func gramDiagonal(d int, grams []Gram) []float64 {
	out := make([]float64, d)
	for _, g := range grams {
		if len(g.Packed) != d {
			continue // a silenced cell (disclosure control) holds nothing
		}
		for i, v := range g.Packed {
			out[i] += v
		}
	}
	return out
}

// BehaviourCells returns the number of cells of maps whose features are
// indicators of cells, whose behaviour fallback is chosen per cell:
// tabular (the states), indicator (its three states) and binned (the
// product of the columns' bins); ok is false for the other maps.
func BehaviourCells(m *features.Map) (cells int, ok bool) {
	if m.Kind == features.Binned {
		return m.Cells(), true
	}
	return m.Discrete()
}

// behaviourCell returns the cell of state under a map with
// [BehaviourCells].
func behaviourCell(m *features.Map, state []float64) int {
	if m.Kind == features.Binned {
		return m.Cell(state)
	}
	return int(state[0])
}

// CellRows returns the weighted number of rows, across sites, in the
// cell of state at step h of the data p was learned from: the sum over
// actions of [Policy.EvidenceCounts]. ok is false when p holds no counts
// (EvidenceCounts is nil). A cell without rows at a step has no evidence
// there, so its decision is p's fallback (under [FallbackBehaviour] the
// step's most frequent action, or over all steps when the step has none:
// [CompleteBehaviour]).
func (p *Policy) CellRows(h int, state []float64) (rows float64, ok bool) {
	if p.EvidenceCounts == nil {
		return 0, false
	}
	c := behaviourCell(&p.Map, state)
	for _, x := range p.EvidenceCounts[h-1][c*p.A : (c+1)*p.A] {
		rows += x
	}
	return rows, true
}

// behaviourAt returns step h's behaviour table, counted from the rows,
// and the step's weighted counts per action, as [BehaviourTable] does.
func behaviourAt(t *traj.Table, m *features.Map, h int) ([]int32, []float64) {
	S, discrete := BehaviourCells(m)
	step := &t.Steps[h-1]
	all := make([]float64, t.A)
	var per []float64
	if discrete {
		per = make([]float64, S*t.A)
	}
	for j := 0; j < step.Len(); j++ {
		wt := 1.0
		if step.Weight != nil {
			wt = step.Weight[j]
		}
		a := int(step.Action[j])
		all[a] += wt
		if discrete {
			per[behaviourCell(m, step.State[j*t.W:(j+1)*t.W])*t.A+a] += wt
		}
	}
	if !discrete {
		return []int32{int32(argmax(all))}, all
	}
	return behaviourTable(all, per, S, t.A), all
}

// behaviourTable returns the most frequent action per cell from the
// counts per (cell, action), per[s*A+a], ties to the lowest action, a cell
// without counts taking the most frequent action of all, whose counts are
// all.
func behaviourTable(all, per []float64, S, A int) []int32 {
	top := argmax(all)
	tab := make([]int32, S)
	for s := 0; s < S; s++ {
		row := per[s*A : (s+1)*A]
		best := argmax(row)
		if row[best] == 0 {
			best = top
		}
		tab[s] = int32(best)
	}
	return tab
}

// CompleteBehaviour returns the behaviour fallback's tables with its last
// level: tabs[h-1] is step h's table and acts[h-1] its counts per action,
// as [BehaviourTable] returns them. A step where no action has any count
// (no rows, or every count withheld by disclosure control) takes, in every
// cell, the most frequent action over all steps: the argmax of the counts
// per action summed over steps 1..H in that order, ties to the lowest
// action (action 0 when no step has a count). The other steps keep their
// tables; tabs itself is not changed.
//
// It panics if tabs and acts differ in length or a step's counts are nil.
func CompleteBehaviour(tabs [][]int32, acts [][]float64) [][]int32 {
	if len(tabs) != len(acts) {
		panic("solve: behaviour tables and action counts differ in steps")
	}
	var total []float64
	for _, c := range acts {
		if c == nil {
			panic("solve: a step's action counts are missing")
		}
		if total == nil {
			total = make([]float64, len(c))
		}
		for a, v := range c {
			total[a] += v
		}
	}
	out := make([][]int32, len(tabs))
	for h, tab := range tabs {
		out[h] = tab
		if counted(acts[h]) {
			continue
		}
		over := make([]int32, len(tab))
		for s := range over {
			over[s] = int32(argmax(total))
		}
		out[h] = over
	}
	return out
}

// counted reports whether a step's counts per action hold any count.
func counted(acts []float64) bool {
	return slices.ContainsFunc(acts, func(v float64) bool { return v != 0 })
}

// hasNaN reports whether x holds a NaN.
func hasNaN(x []float64) bool {
	nan := false
	for _, v := range x {
		if v != v {
			nan = true
		}
	}
	return nan
}

func argmax(x []float64) int {
	best := 0
	for i := 1; i < len(x); i++ {
		if x[i] > x[best] {
			best = i
		}
	}
	return best
}
