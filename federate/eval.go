package federate

// Evaluation rounds: a finished job evaluates a policy over the same sites
// as eval.FromData evaluates it on every row. Rounds 0..H-1 solve step
// h = H-r of the evaluation's backward passes (the robust value with the
// ridge eval.EvalLambda, the pessimistic value with the policy's lambda and
// penalty, and, for a policy that pools sites, the Delta_h pass over its
// groups) with a solve.Round: each site forms its right-hand sides
// (Round.RHS, following the policy) and the coordinator solves the step
// from the sites' Grams and right-hand sides (Round.Solve); for indicator
// maps, the robust identification bounds' recursion too. The last round
// (r = H) collects the sums over the initial states and each site's own
// results.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// Files of an evaluation inside a job directory.
const (
	EvalDir        = "eval"
	EvalStateFile  = "state.json"
	EvalPolicyFile = "policy.parquet"
	EvalResultFile = "eval.json"
	// EvalTextFile is the finished evaluation as the coordinator printed
	// it, beside its JSON.
	EvalTextFile = "eval.txt"
)

// evalVectors are the vectors of an evaluation round's message besides
// the Gram, counts and right-hand sides.
var evalVectors = []string{"bound_n", "bound_lo", "bound_hi", "value", "site", "bounds", "support", "agreement", "censored"}

// EvalPass is one backward pass of an evaluation.
type EvalPass struct {
	Name   string  `json:"name"`
	Lambda float64 `json:"lambda"`
	Beta   float64 `json:"beta"`
	// Follow: the pass evaluates the policy (robust value, pessimistic value);
	// otherwise it is Algorithm 1 over Groups with each site's own
	// regression beside it (Delta_h).
	Follow bool              `json:"follow"`
	Groups [][]string        `json:"groups"`
	Names  []string          `json:"group_names,omitempty"`
	Steps  []*solve.StepCoef `json:"steps"`
}

// EvalState is an evaluation's state between rounds.
type EvalState struct {
	FormatVersion int    `json:"format_version"`
	JobID         string `json:"job_id"`
	Kind          string `json:"kind"`
	// Policy names the evaluated policy file (its base name) and
	// PolicySHA256 the bytes every site must evaluate.
	Policy       string       `json:"policy"`
	PolicySHA256 string       `json:"policy_sha256"`
	Method       solve.Method `json:"method"`
	// Round is the next round to fold, 0..H; H+1: done.
	Round  int        `json:"round"`
	Passes []EvalPass `json:"passes"`
	// Bounds: the map's features are indicators; BoundLo[h-1] and
	// BoundHi[h-1] are the robust bounds of Q at step h per cell, and
	// Everywhere[h-1][i] says every site observed cell i at step h.
	Bounds     bool        `json:"bounds"`
	BoundLo    [][]float64 `json:"bound_lo,omitempty"`
	BoundHi    [][]float64 `json:"bound_hi,omitempty"`
	Everywhere [][]bool    `json:"everywhere,omitempty"`
	// Delta holds Delta_{h,m} of the steps folded so far (step-major,
	// then group order).
	Delta    []solve.DeltaCell `json:"delta,omitempty"`
	Messages []Provenance      `json:"messages,omitempty"`
}

// Rounds returns the number of rounds of an evaluation: H, then one.
func (e *EvalState) Rounds(j *Job) int { return j.H + 1 }

// Done reports whether every round of the evaluation is folded.
func (e *EvalState) Done(j *Job) bool { return e.Round > j.H }

// NewEval opens the evaluation of p (whose file has the given base name
// and SHA-256) on a finished job: the passes of eval.FromData with the
// policy's settings (lambda, c, xi, beta when given), the lower bound's
// beta for one group per site, and the Delta_h pass over clusters when
// given, or else over the policy's groups when it pools sites (cluster,
// pooled).
func NewEval(j *Job, s *State, p *solve.Policy, name, sha string, clusters []Cluster) (*EvalState, error) {
	if !s.Done(j) {
		return nil, fmt.Errorf("federate: job %s is at round %d of %d: an evaluation needs a finished job (its sites' order and sizes)", j.ID, s.Round, j.Rounds())
	}
	if p.Map.Kind != j.Map.Kind || p.D != j.Map.Dim() || p.A != j.Map.A || p.H < j.H || !slices.Equal(p.ActionLabels, j.Rules.ActionLabels) {
		return nil, refusef("%s: the policy (%s, d = %d, A = %d, H = %d) does not fit the job (%s, d = %d, A = %d, H = %d)", name,
			p.Map.Kind, p.D, p.A, p.H, j.Map.Kind, j.Map.Dim(), j.Map.A, j.H)
	}
	if j.Map.Kind == features.ActionBlock && !slices.Equal(p.Map.StateColumns, j.Map.StateColumns) {
		return nil, refusef("%s: the policy's state columns %v are not the job's %v", name, p.Map.StateColumns, j.Map.StateColumns)
	}
	d := j.Map.Dim()
	st := evalSettingsOf(p)
	all := [][]string{}
	for _, site := range s.Order {
		all = append(all, []string{site})
	}
	beta := st.BetaFor(d, j.H, s.Trajectories, groupsOf(all, s.Order))
	e := &EvalState{FormatVersion: FormatVersion, JobID: j.ID, Kind: KindEval, Policy: name, PolicySHA256: sha, Method: p.Method, Bounds: eval.IndicatorMap(&j.Map)}
	e.Passes = []EvalPass{
		{Name: "robust", Lambda: min(p.Lambda, eval.EvalLambda), Beta: 0, Follow: true, Groups: all},
		{Name: "lower", Lambda: p.Lambda, Beta: beta, Follow: true, Groups: all},
	}
	groups := clusters
	if groups == nil && (p.Method == solve.Cluster || p.Method == solve.Pooled) {
		for _, g := range p.Groups {
			groups = append(groups, Cluster{Name: g.Name, Sites: g.Sites})
		}
	}
	if groups != nil {
		dp := EvalPass{Name: "delta", Lambda: p.Lambda}
		for _, g := range groups {
			for _, site := range g.Sites {
				if !slices.Contains(s.Order, site) {
					return nil, refusef("%s: the policy's site %s is not one of the job's sites %v", name, site, s.Order)
				}
			}
			dp.Groups = append(dp.Groups, slices.Clone(g.Sites))
			dp.Names = append(dp.Names, g.Name)
		}
		dp.Beta = st.BetaFor(d, j.H, s.Trajectories, groupsOf(dp.Groups, s.Order))
		e.Passes = append(e.Passes, dp)
	}
	for i := range e.Passes {
		e.Passes[i].Steps = make([]*solve.StepCoef, j.H)
		if math.IsNaN(e.Passes[i].Beta) || math.IsInf(e.Passes[i].Beta, 0) {
			return nil, fmt.Errorf("federate: the penalty beta is %v with the policy's c %g and xi %g", e.Passes[i].Beta, p.C, p.Xi)
		}
	}
	if e.Bounds {
		e.BoundLo, e.BoundHi, e.Everywhere = make([][]float64, j.H), make([][]float64, j.H), make([][]bool, j.H)
	}
	return e, nil
}

// evalRounds returns the settings a site's evaluation sums are formed
// under: the job's, without the stationary variant, since eval.FromData
// regresses every step on its own rows whatever the policy was solved with.
func evalRounds(j *Job) solve.Settings {
	s := settingsOf(j)
	s.Stationary = false
	return s
}

// evalSettingsOf returns the settings eval.FromData is given for a policy.
func evalSettingsOf(p *solve.Policy) solve.Settings {
	s := solve.DefaultSettings
	s.Lambda, s.C, s.Xi = p.Lambda, p.C, p.Xi
	if p.BetaGiven {
		s.Beta, s.BetaSet = p.Beta, true
	}
	return s
}

// groupsOf returns a pass's groups as indices into order.
func groupsOf(groups [][]string, order []string) [][]int {
	var out [][]int
	for _, g := range groups {
		var members []int
		for _, site := range g {
			members = append(members, slices.Index(order, site))
		}
		out = append(out, members)
	}
	return out
}

// sitePass returns pass i as one site (site 0 of its own solver) takes
// part in it, or false when the site is not in the pass.
func (e *EvalState) sitePass(i int, site string, p *solve.Policy) (solve.Pass, bool) {
	ep := &e.Passes[i]
	in := false
	for _, g := range ep.Groups {
		in = in || slices.Contains(g, site)
	}
	pass := solve.Pass{Name: ep.Name, Groups: [][]int{{0}}, Beta: ep.Beta}
	if ep.Follow {
		pass.Follow = p
	}
	return pass, in
}

// EvalMessage computes site's message for the evaluation's current round
// from its own rows: at round r < H (step h = H - r) its Gram of step h,
// its released counts, the right-hand side of every pass with Vhat_{h+1}
// from the passes' step-(h+1) coefficients, and for indicator maps its
// cell counts and sums of the bounds' recursion (cells counted at fewer
// than min count rows withheld, as never observed); at round H its sums of
// the robust value and pessimistic value over its step-1 rows, its own results
// and, for indicator maps, its bounds' sums and support counts. The
// round's sums over the site's patients are withheld when it has fewer
// step-1 rows than the larger of min rows and min count.
func EvalMessage(ctx context.Context, j *Job, s *State, e *EvalState, p *solve.Policy, in SiteInput) (*Message, error) {
	t := in.Stats.Table
	if e.Done(j) {
		return nil, fmt.Errorf("federate: the evaluation of %s on job %s is finished: nothing to send", e.Policy, j.ID)
	}
	st, err := in.check(ctx, j, s)
	if err != nil {
		return nil, err
	}
	dc := st.Disclosure()
	r := e.Round
	h := j.StepOf(r)
	tot, err := totalsOf(st, in.StepRows)
	if err != nil {
		return nil, err
	}
	m := &Message{FormatVersion: FormatVersion, JobID: j.ID, Round: r, Step: h, Kind: KindEval, Site: in.Site, Map: j.Map, Numeric: in.Numeric,
		Trajectories: tot.Trajectories, Rows: tot.Rows, Weighted: tot.Weighted, Disclosure: dc, Sources: in.Sources}
	if h == 0 {
		return m, evalFinal(ctx, j, e, p, in, m, tot)
	}
	m.StepRows = st.CellRows(h, 0)
	m.Silent, m.Suppressed = st.Suppressed(h, 0)
	grams, err := st.StepGrams(ctx, h)
	if err != nil {
		return nil, err
	}
	m.Gram = grams[0].Packed
	for _, c := range st.Counts(h, 0) {
		m.Counts = append(m.Counts, float64(c))
	}
	var passes []solve.Pass
	var next []*solve.StepCoef
	for i := range e.Passes {
		pass, ok := e.sitePass(i, in.Site, p)
		if !ok {
			continue
		}
		if h < j.H {
			c := e.Passes[i].Steps[h]
			if c == nil {
				return nil, refusef("the evaluation's state lacks pass %s's step %d", pass.Name, h+1)
			}
			next = append(next, c)
		}
		passes = append(passes, pass)
	}
	rd := solve.Round{Passes: passes, Settings: evalRounds(j)}
	rhs, err := rd.RHS(ctx, st, h, next)
	if err != nil {
		return nil, err
	}
	for i, pass := range passes {
		m.Runs = append(m.Runs, pass.Name)
		m.RHS = append(m.RHS, rhs[i][0])
	}
	if e.Bounds {
		var qlo, qhi []float64
		if h < j.H {
			qlo, qhi = e.BoundLo[h], e.BoundHi[h]
		}
		n, lo, hi := eval.SiteBoundSums(t, &j.Map, p, h, qlo, qhi)
		// A cell is a feature of the indicator map: its sums are released
		// when its count is (m.Counts: rows, not weights, and 0 at a
		// silent step), as never observed otherwise.
		for i := range n {
			if m.Counts[i] == 0 {
				n[i], lo[i], hi[i] = 0, 0, 0
			}
		}
		m.Extra = append(m.Extra, Vec{"bound_n", 0, n}, Vec{"bound_lo", 0, lo}, Vec{"bound_hi", 0, hi})
	}
	m.seal()
	return m, nil
}

// evalFinal fills the last round's message.
func evalFinal(ctx context.Context, j *Job, e *EvalState, p *solve.Policy, in SiteInput, m *Message, tot totals) error {
	st := in.Stats
	t := st.Table
	dc := st.Disclosure()
	m.StepRows = float64(t.Steps[0].Len())
	// The site's censored episodes (traj.Table.Censored), which its own
	// results leave out as a central evaluation does: a count of
	// trajectories, withheld when it or the rest of the site's
	// trajectories is from 1 to min count - 1.
	censored := 0
	if c := t.CensoredCount(); c != nil {
		censored = c[0]
	}
	if small(float64(censored), float64(t.Trajectories[0]), dc.MinCount) {
		m.Withheld = append(m.Withheld, "censored")
	} else {
		m.Extra = append(m.Extra, Vec{"censored", 0, []float64{float64(censored)}})
	}
	if t.Steps[0].Len() < releasedFrom(dc) {
		m.Withheld = append(m.Withheld, "value", "site", "bounds", "support")
		m.seal()
		return nil
	}
	var passes []solve.Pass
	var coefs [][]*solve.StepCoef
	for i := range e.Passes[:2] {
		pass, _ := e.sitePass(i, in.Site, p)
		passes = append(passes, pass)
		coefs = append(coefs, e.Passes[i].Steps)
	}
	sums, err := solve.NewSolver(st, evalRounds(j)).SiteValues(ctx, passes, coefs, false)
	if err != nil {
		return err
	}
	for i := range passes {
		m.Extra = append(m.Extra, Vec{"value", int32(i), []float64{sums[i].V1[0], sums[i].Rows[0]}})
	}
	own, obs, err := eval.SiteOwn(ctx, solve.NewSolver(st, evalSettingsOf(p)), p, evalSettingsOf(p))
	if err != nil {
		return err
	}
	m.Extra = append(m.Extra, Vec{"site", 0, []float64{own.Value, obs.Value, own.Support, own.Lower, own.Upper}})
	// The agreement with the recorded actions, weighted as eval.AgreementOf
	// weighs it; disclosure control counts rows.
	counts, err := eval.CountAgreement(ctx, p, t, 0)
	if err != nil {
		return err
	}
	c := counts[0]
	// Its row count is the site's whole: withheld with it when the totals
	// leave out silent steps' rows.
	if !tot.Exact || small(c.Count[1], c.Count[0], dc.MinCount) || small(c.Count[2], c.Count[0], dc.MinCount) {
		m.Withheld = append(m.Withheld, "agreement")
	} else {
		m.Extra = append(m.Extra, Vec{"agreement", 0, []float64{c.Rows, c.Agree, c.NoEvidence}})
	}
	if e.Bounds {
		lo, hi, sup, visits, rows := eval.SiteBoundsFinal(t, &j.Map, p, e.BoundLo[0], e.BoundHi[0], e.Everywhere)
		m.Extra = append(m.Extra, Vec{"bounds", 0, []float64{lo, hi}})
		if small(rows[0], rows[1], dc.MinCount) {
			m.Withheld = append(m.Withheld, "support")
		} else {
			m.Extra = append(m.Extra, Vec{"support", 0, []float64{sup, visits}})
		}
	}
	m.seal()
	return nil
}

// EvalResult is what the last round of an evaluation yields: the report
// of eval.FromData without bootstrap or permutations for what sums give, and
// notes on what differs.
type EvalResult struct {
	Report *eval.Report
	// Agreement is the policy's agreement with the recorded actions (nil
	// when a site withheld its counts).
	Agreement *eval.Agreement
	Notes     []string
}

// Result returns the finished evaluation e of job j as a central
// evaluation reports one, with the job's settings (and, as setting
// federated_job, its ID) and what the federated evaluation left out.
func (r *EvalResult) Result(j *Job, e *EvalState) *eval.Result {
	f := &eval.Federated{Job: j.ID, Rounds: e.Rounds(j), Notes: append([]string{}, r.Notes...), LeftOut: []string{
		"bootstrap intervals and bias (they resample each site's trajectories: rows)",
		"permutation p-values of Delta_h (they reassign trajectories between sites: rows)",
	}}
	for _, m := range e.Messages {
		f.Bytes += m.Bytes
	}
	if !e.Bounds {
		f.LeftOut = append(f.LeftOut, "the robust support of a map whose features are not indicators (each visit's leverage under every site's Gram: rows of one site against the Grams of all)")
	}
	return &eval.Result{Policy: e.Policy, Method: string(e.Method), Report: r.Report, Settings: j.recordedSettings(), Agreement: r.Agreement, Federated: f}
}

// FoldEval checks one evaluation round's messages (as Fold checks a solve
// round's) and folds them; after the last round it also returns the
// result. e is left unchanged.
func FoldEval(ctx context.Context, j *Job, s *State, e *EvalState, in []Incoming) (*EvalState, *EvalResult, error) {
	if e.Done(j) {
		return nil, nil, refusef("the evaluation of %s on job %s is finished (all %d rounds folded)", e.Policy, j.ID, e.Rounds(j))
	}
	es := &State{Round: e.Round, Order: s.Order, Numeric: s.Numeric, Trajectories: s.Trajectories, Rows: s.Rows, Messages: s.Messages}
	bySite, err := checkRound(j, es, in, KindEval)
	if err != nil {
		return nil, nil, err
	}
	next := cloneEval(e)
	h := j.StepOf(e.Round)
	var res *EvalResult
	if h == 0 {
		if res, err = foldEvalFinal(j, s, next, bySite); err != nil {
			return nil, nil, err
		}
	} else if err := foldEvalStep(ctx, j, s, next, h, bySite); err != nil {
		return nil, nil, err
	}
	for _, site := range s.Order {
		inc := bySite[site]
		next.Messages = append(next.Messages, Provenance{Round: e.Round, Site: site, File: inc.File, SHA256: inc.SHA256,
			Checksum: inc.Msg.Checksum, Bytes: inc.Bytes, StepRows: inc.Msg.StepRows})
	}
	next.Round++
	return next, res, nil
}

func foldEvalStep(ctx context.Context, j *Job, s *State, e *EvalState, h int, bySite map[string]*Incoming) error {
	// The sites form their Grams under the finished job's layout
	// (siteStats): a precomputed map's joint blocks.
	layout, err := jobLayout(j, s, nil)
	if err != nil {
		return err
	}
	d := j.Map.Dim()
	K := len(s.Order)
	grams := make([][]solve.Gram, K)
	for k, site := range s.Order {
		inc := bySite[site]
		m := inc.Msg
		var want []string
		for i := range e.Passes {
			if _, ok := e.sitePass(i, site, nil); ok {
				want = append(want, e.Passes[i].Name)
			}
		}
		if !slices.Equal(m.Runs, want) || m.Step != h {
			return refusef("%s: message for step %d with passes %v, the evaluation is at step %d with %v", inc.File, m.Step, m.Runs, h, want)
		}
		if len(m.Gram) != layout.Size() || len(m.Counts) != d || !finite(m.Gram) {
			return refusef("%s: the Gram has %d values and the counts %d, the job's map needs %d and %d (finite)", inc.File, len(m.Gram), len(m.Counts), layout.Size(), d)
		}
		for i, r := range m.RHS {
			if len(r) != d || !finite(r) {
				return refusef("%s: right-hand side %d has %d values, want d = %d (finite)", inc.File, i, len(r), d)
			}
		}
		if e.Bounds {
			for _, name := range []string{"bound_n", "bound_lo", "bound_hi"} {
				if v := m.vector(name, 0); len(v) != d || !finite(v) {
					return refusef("%s: %s has %d values, want d = %d (finite)", inc.File, name, len(v), d)
				}
			}
		}
		grams[k] = []solve.Gram{{N: m.StepRows, Packed: m.Gram}}
	}
	// The passes differ in lambda: one round each.
	for i := range e.Passes {
		ep := &e.Passes[i]
		pass := solve.Pass{Name: ep.Name, Groups: groupsOf(ep.Groups, s.Order), Beta: ep.Beta, SiteNu: !ep.Follow}
		rd := solve.Round{Passes: []solve.Pass{pass}, Settings: evalRounds(j)}
		rd.Settings.Lambda = ep.Lambda
		cs, err := rd.Solve(ctx, layout, h, solve.RoundSums{Grams: grams, RHS: rhsOf(s.Order, bySite, rd.Passes)})
		if err != nil {
			return err
		}
		c := cs[0]
		for gi, x := range c.Delta {
			e.Delta = append(e.Delta, solve.DeltaCell{Step: h, Cluster: ep.Names[gi], Delta: x})
		}
		ep.Steps[h-1] = c
	}
	if e.Bounds {
		n, lo, hi := make([][]float64, K), make([][]float64, K), make([][]float64, K)
		for k, site := range s.Order {
			m := bySite[site].Msg
			n[k], lo[k], hi[k] = m.vector("bound_n", 0), m.vector("bound_lo", 0), m.vector("bound_hi", 0)
		}
		e.BoundLo[h-1], e.BoundHi[h-1], e.Everywhere[h-1] = eval.RobustBounds(j.H, h, j.returnRange(), e.Passes[0].Lambda, n, lo, hi)
	}
	return nil
}

// finalSums are the last evaluation round's sums over the sites, added in
// site order, and the sites that withheld some of them.
type finalSums struct {
	sumV, nV, sumL, nL, lo, hi, sup, visits float64
	withheld, noSupport, noAgree, noCensor  []string
	agreeSites                              []string
	agree                                   []eval.AgreementCounts
}

// add checks site's message of the last evaluation round, adds its sums
// and appends its own results to rep.
func (f *finalSums) add(e *EvalState, site string, inc *Incoming, rep *eval.Report) error {
	nan := math.NaN()
	m := inc.Msg
	if m.Step != 0 {
		return refusef("%s: message for step %d, the evaluation is at its last round", inc.File, m.Step)
	}
	sv := eval.SiteValue{Site: site, Value: nan, CILow: nan, CIHigh: nan, Bias: nan, Exact: nan, Lower: nan, Upper: nan,
		BoundsCILow: nan, BoundsCIHigh: nan, Support: nan}
	ov := eval.ObservedValue{Site: site, Value: nan, CILow: nan, CIHigh: nan}
	if slices.Contains(m.Withheld, "value") {
		f.withheld = append(f.withheld, site)
	} else {
		rv, lv, own := m.vector("value", 0), m.vector("value", 1), m.vector("site", 0)
		if len(rv) != 2 || len(lv) != 2 || len(own) != 5 || !finite(rv) || !finite(lv) {
			return refusef("%s: the value sums or the site's results are missing or malformed", inc.File)
		}
		f.sumV, f.nV, f.sumL, f.nL = f.sumV+rv[0], f.nV+rv[1], f.sumL+lv[0], f.nL+lv[1]
		sv.Value, ov.Value, sv.Support, sv.Lower, sv.Upper = own[0], own[1], own[2], own[3], own[4]
		if e.Bounds {
			b := m.vector("bounds", 0)
			if len(b) != 2 || !finite(b) {
				return refusef("%s: the bounds' sums are missing or malformed", inc.File)
			}
			f.lo, f.hi = f.lo+b[0], f.hi+b[1]
		}
	}
	if e.Bounds {
		if x := m.vector("support", 0); len(x) == 2 && finite(x) {
			f.sup, f.visits = f.sup+x[0], f.visits+x[1]
		} else {
			f.noSupport = append(f.noSupport, site)
		}
	}
	if x := m.vector("censored", 0); len(x) == 1 && x[0] >= 0 && x[0] == math.Trunc(x[0]) && x[0] <= float64(math.MaxInt32) {
		sv.Censored, ov.Censored = int(x[0]), int(x[0])
	} else if slices.Contains(m.Withheld, "censored") {
		f.noCensor = append(f.noCensor, site)
	} else if x != nil {
		return refusef("%s: the count of censored episodes is malformed", inc.File)
	}
	if x := m.vector("agreement", 0); len(x) == 3 && finite(x) && x[0] > 0 {
		f.agreeSites = append(f.agreeSites, site)
		f.agree = append(f.agree, eval.AgreementCounts{Rows: x[0], Agree: x[1], NoEvidence: x[2]})
	} else {
		f.noAgree = append(f.noAgree, site)
	}
	rep.Sites = append(rep.Sites, sv)
	rep.Observed = append(rep.Observed, ov)
	return nil
}

// returnRange is the range of an episode's total reward that a job's
// evaluation uses, for its bounds and its report: [0, H RewardMax], as
// a central evaluation without --return-range.
func (j *Job) returnRange() eval.Range {
	return eval.Range{Lo: 0, Hi: float64(j.H) * eval.RewardMax}
}

func foldEvalFinal(j *Job, s *State, e *EvalState, bySite map[string]*Incoming) (*EvalResult, error) {
	nan := math.NaN()
	rep := &eval.Report{Beta: e.Passes[1].Beta, H: j.H, ValueCILow: nan, ValueCIHigh: nan, ValueBias: nan, Lower: nan, Upper: nan,
		BoundsCILow: nan, BoundsCIHigh: nan, Support: nan, HasBounds: e.Bounds, CellsPoolStates: eval.PoolsStates(&j.Map), Level: 0.95}
	g := j.returnRange()
	rep.ReturnLo, rep.ReturnHi = g.Lo, g.Hi
	res := &EvalResult{Report: rep}
	var f finalSums
	for _, site := range s.Order {
		if err := f.add(e, site, bySite[site], rep); err != nil {
			return nil, err
		}
	}
	if len(f.noAgree) == 0 {
		res.Agreement = eval.NewAgreement(f.agreeSites, f.agree)
	} else {
		res.Notes = append(res.Notes, fmt.Sprintf("sites %v withheld their agreement counts (a count below %d): the agreement with the recorded actions is null", f.noAgree, j.Disclosure.MinCount))
	}
	rep.PolicyValue, rep.PessimisticValue = f.sumV/f.nV, f.sumL/f.nL
	if e.Bounds {
		rep.Lower, rep.Upper = f.lo/f.nV, f.hi/f.nV
		if len(f.noSupport) == 0 {
			rep.Support = f.sup / f.visits
		}
	}
	worst := -1
	for k := range rep.Sites {
		if !math.IsNaN(rep.Sites[k].Value) && (worst < 0 || rep.Sites[k].Value < rep.Sites[worst].Value) {
			worst = k
		}
	}
	if worst >= 0 {
		rep.WorstSite = rep.Sites[worst].Site
	}
	if len(f.withheld) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("sites %v have fewer than %d initial states and withheld their sums: the values are over the other sites' initial states, and their own results are null", f.withheld, releasedFrom(j.Disclosure)))
	}
	if len(f.noCensor) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("sites %v withheld their number of censored episodes (it, or the rest of their trajectories, is below %d): it shows as 0, and their results leave those episodes out all the same", f.noCensor, j.Disclosure.MinCount))
	}
	if len(f.noSupport) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("sites %v withheld their supported visits (fewer than %d): the robust support is null", f.noSupport, j.Disclosure.MinCount))
	}
	if len(e.Passes) > 2 {
		ep := &e.Passes[2]
		groups := groupsOf(ep.Groups, s.Order)
		for h := 1; h <= j.H; h++ {
			for _, c := range e.Delta {
				if c.Step == h {
					rep.Delta = append(rep.Delta, eval.DeltaValue{Step: c.Step, Cluster: c.Cluster, Delta: c.Delta, PValue: nan})
				}
			}
		}
		rep.DeltaSum, rep.Yardstick = eval.DeltaSummary(rep.Delta, j.H, groups, s.Trajectories)
	}
	rep.Flag()
	// A withheld site's own results are unknown, not unidentified.
	for _, site := range f.withheld {
		for k := range rep.Sites {
			if rep.Sites[k].Site == site {
				rep.Sites[k].Identified = true
			}
		}
		rep.Warnings = slices.DeleteFunc(rep.Warnings, func(w string) bool { return strings.HasPrefix(w, "site "+site+"'s value is not identified") })
	}
	return res, nil
}

func cloneEval(e *EvalState) *EvalState {
	c := *e
	c.Passes = slices.Clone(e.Passes)
	for i := range c.Passes {
		c.Passes[i].Steps = slices.Clone(e.Passes[i].Steps)
	}
	c.BoundLo, c.BoundHi, c.Everywhere = slices.Clone(e.BoundLo), slices.Clone(e.BoundHi), slices.Clone(e.Everywhere)
	c.Delta = slices.Clone(e.Delta)
	c.Messages = slices.Clone(e.Messages)
	return &c
}

// LoadEval reads a job's open or finished evaluation; nil without one.
func LoadEval(dir string, j *Job) (*EvalState, error) {
	path := filepath.Join(dir, EvalDir, EvalStateFile)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, nil
	}
	e := &EvalState{}
	if err := readJSON(path, e); err != nil {
		return nil, err
	}
	switch {
	case e.FormatVersion != FormatVersion:
		return nil, refusef("%s: format_version %d, this grmdp reads %d", path, e.FormatVersion, FormatVersion)
	case e.JobID != j.ID:
		return nil, refusef("%s: an evaluation of job %s beside job %s", path, e.JobID, j.ID)
	case e.Kind != KindEval || e.Round < 0 || e.Round > j.H+1 || len(e.Passes) < 2:
		return nil, refusef("%s: not an evaluation state of this job", path)
	}
	for _, p := range e.Passes {
		if len(p.Steps) != j.H {
			return nil, refusef("%s: pass %s has %d steps, want %d", path, p.Name, len(p.Steps), j.H)
		}
	}
	return e, nil
}

// SaveEval replaces the evaluation's state atomically.
func SaveEval(dir string, e *EvalState) error {
	if err := os.MkdirAll(filepath.Join(dir, EvalDir), 0o755); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, EvalDir, EvalStateFile), e)
}

// small reports whether a count of rows, or its complement among total
// (which the total's recipient can infer), is from 1 to minCount - 1: a
// count disclosure control withholds.
func small(count, total float64, minCount int) bool {
	k := float64(minCount)
	return count > 0 && count < k || total-count > 0 && total-count < k
}
