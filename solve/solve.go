package solve

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// Method names a way of solving.
type Method string

// The methods. Sitewise, Cluster and Pooled are Algorithm 1 with different
// groupings (one code path); the PEVI methods are the baselines of the
// paper's section 4.1; Behaviour clones the data's most frequent action.
const (
	Sitewise   Method = "sitewise"
	Cluster    Method = "cluster"
	Pooled     Method = "pooled"
	PEVIPooled Method = "pevi-pooled"
	PEVIAvg    Method = "pevi-avg"
	PEVIMin    Method = "pevi-min"
	Behaviour  Method = "behaviour"
)

// Methods lists every method in the order reports show them.
var Methods = []Method{Sitewise, Cluster, Pooled, PEVIPooled, PEVIAvg, PEVIMin, Behaviour}

// ParseMethod returns the method named s.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Methods))
	for i, m := range Methods {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown method %q (want one of %s)", s, strings.Join(names, ", "))
}

// Fallback is the rule for decisions without evidence: every action's Qhat
// is 0.
type Fallback string

const (
	// FallbackBehaviour recommends the action the training data took most
	// often at that (step, state) — at that step for continuous maps — with
	// ties to the lowest action.
	FallbackBehaviour Fallback = "behaviour"
	// FallbackLowest is the paper's rule: the lowest action.
	FallbackLowest Fallback = "lowest"
)

// Settings are the solver's tuning parameters. The zero value is not the
// paper's: start from [DefaultSettings].
type Settings struct {
	// Lambda is the ridge parameter (default 1); it must be positive.
	Lambda float64
	// C scales the penalty: beta = C d H sqrt(zeta) (default 5e-4).
	C float64
	// Xi is the confidence parameter in (0,1) (default 0.05).
	Xi float64
	// Beta, when BetaSet, is used as beta directly, ignoring C and Xi.
	Beta    float64
	BetaSet bool
	// Workers bounds parallelism; 0 means GOMAXPROCS. Results do not depend
	// on it.
	Workers int
	// Stationary asserts that transitions and rewards do not depend on the
	// step: each group's regression then uses the transitions of every step
	// (one Lambda per group), the right-hand side of round h taking
	// Vhat_{h+1} at every transition's next state. Off by default.
	Stationary bool
	// Fallback is the rule for decisions without evidence (default
	// behaviour).
	Fallback Fallback
	// Tuning sets the sizes of the memory-saving paths (zero value: the
	// defaults); results do not depend on it.
	Tuning Tuning
}

// DefaultSettings are the paper's simulation settings with the behaviour
// fallback.
var DefaultSettings = Settings{Lambda: 1, C: 5e-4, Xi: 0.05, Fallback: FallbackBehaviour}

// Beta returns c * d * H * sqrt(zeta) with zeta = log(2 d G H Nmax / xi).
func Beta(c float64, d, G, H int, nmax float64, xi float64) float64 {
	zeta := math.Log(2 * float64(d) * float64(G) * float64(H) * nmax / xi)
	return c * float64(d) * float64(H) * math.Sqrt(zeta)
}

// BetaFor returns the penalty scale of a pass over groups (site indices)
// of sites with the given trajectory counts, H steps and d features:
// s.Beta when given, otherwise [Beta] with G the number of groups and
// N_max the largest group's trajectories.
func (s Settings) BetaFor(d, H int, trajectories []int, groups [][]int) float64 {
	if s.BetaSet {
		return s.Beta
	}
	nmax := 0
	for _, members := range groups {
		n := 0
		for _, k := range members {
			n += trajectories[k]
		}
		nmax = max(nmax, n)
	}
	return Beta(s.C, d, len(groups), H, float64(nmax), s.Xi)
}

// Group is a set of sites solved as one (a site, a cluster, or all sites).
type Group struct {
	Name  string   `json:"name"`
	Sites []string `json:"sites"`
	// Trajectories is the number of trajectories in the group.
	Trajectories int `json:"trajectories"`
	idx          []int
}

// Problem says which groups a method uses. Groups (site indices) is needed
// only for the Cluster method; names default to c1..cM.
type Problem struct {
	Method     Method
	Groups     [][]int
	GroupNames []string
}

// Solver holds the statistics of one table and solves any method from them
// without reading the data again. Factorisations are cached per grouping
// and step, so a penalty path or a comparison of methods factorises each
// (group, step) once.
type Solver struct {
	st       *Stats
	settings Settings
	// factors is shared with the solvers [Solver.WithPenalty] derives:
	// factors do not depend on the penalty.
	factors *factorCache
	// runs caches backward passes by grouping, penalty and beta: pevi-avg
	// and pevi-min share their per-site runs.
	runs map[runKey]*Run
	beh  [][]int32   // behaviour table per step
	evc  [][]float64 // evidence counts per step (see Policy.EvidenceCounts)
}

// NewSolver returns a Solver over st.
func NewSolver(st *Stats, s Settings) *Solver {
	return &Solver{st: st, settings: s, factors: &factorCache{m: map[factorKey][]*Factor{}}}
}

// Stats returns the solver's statistics.
func (sv *Solver) Stats() *Stats { return sv.st }

// Settings returns the solver's settings.
func (sv *Solver) Settings() Settings { return sv.settings }

// grouping identifies a grouping of sites in the solver's caches: each
// group's size and site indices, in order, as varints.
type grouping string

func groupingOf(groups [][]int) grouping {
	var b []byte
	for _, g := range groups {
		b = binary.AppendUvarint(b, uint64(len(g)))
		for _, k := range g {
			b = binary.AppendUvarint(b, uint64(k))
		}
	}
	return grouping(b)
}

// factorKey names the factors of every (group, step) of a grouping, with
// Lambda^{-1} (for PEVI) or without.
type factorKey struct {
	groups  grouping
	inverse bool
}

// runKey names a backward pass: a grouping, a penalty and its beta's bits.
type runKey struct {
	groups grouping
	kind   penalty
	beta   uint64
}

func keyOfRun(groups [][]int, kind penalty, beta float64) runKey {
	return runKey{groupingOf(groups), kind, math.Float64bits(beta)}
}

// factorCache holds the factors of every (group, step) of the groupings
// solved so far; safe for concurrent use. The factors are never modified
// once stored.
type factorCache struct {
	mu sync.Mutex
	m  map[factorKey][]*Factor
}

func (c *factorCache) get(k factorKey) ([]*Factor, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.m[k]
	return f, ok
}

func (c *factorCache) put(k factorKey, f []*Factor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = f
}

// factorsFor returns the factor of every (group, step), building it once.
func (sv *Solver) factorsFor(ctx context.Context, groups [][]int, inverse bool) ([]*Factor, error) {
	key := factorKey{groupingOf(groups), inverse}
	if f, ok := sv.factors.get(key); ok {
		return f, nil
	}
	st := sv.st
	H, G := st.Table.H, len(groups)
	steps := H
	if sv.settings.Stationary {
		steps = 1
	}
	out := make([]*Factor, steps*G)
	// cells[h-1] holds step h's Grams while factors use them: every
	// step's when NewStats kept them or transitions are stationary (each
	// factor sums every step's Gram then), or else one step at a time, so
	// that no more than one step's Grams are held.
	cells := make([][]Gram, H)
	byStep := st.Cells == nil && !sv.settings.Stationary
	if !byStep {
		for h := 1; h <= H; h++ {
			var err error
			if cells[h-1], err = st.StepGrams(ctx, h); err != nil {
				return nil, err
			}
		}
	}
	build := func(g *workers.Group, h int) {
		for gi, members := range groups {
			g.Go(func(ctx context.Context) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				var grams []*Gram
				for _, k := range members {
					if sv.settings.Stationary {
						// Every step's Gram, in step order.
						for hh := 1; hh <= H; hh++ {
							grams = append(grams, &cells[hh-1][k])
						}
						continue
					}
					grams = append(grams, &cells[h-1][k])
				}
				f, err := NewFactor(&st.Layout, grams, sv.settings.Lambda, inverse)
				if err != nil {
					return fmt.Errorf("step %d, group %d: %w", h, gi, err)
				}
				out[(h-1)*G+gi] = f
				return nil
			})
		}
	}
	if byStep {
		for h := 1; h <= steps; h++ {
			var err error
			if cells[h-1], err = st.StepGrams(ctx, h); err != nil {
				return nil, err
			}
			g := workers.NewGroup(ctx, sv.settings.Workers)
			build(g, h)
			if err := g.Wait(); err != nil {
				return nil, err
			}
			cells[h-1] = nil
		}
	} else {
		g := workers.NewGroup(ctx, sv.settings.Workers)
		for h := 1; h <= steps; h++ {
			build(g, h)
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
	}
	sv.factors.put(key, out)
	return out, nil
}

// factorBytes estimates the memory of the factors of every (group, step)
// that specs need.
func (sv *Solver) factorBytes(specs []passSpec) int64 {
	l := &sv.st.Layout
	d, packed := int64(len(l.Blocks.Of)), int64(l.Size())
	H, K := int64(sv.st.Table.H), int64(len(sv.st.Table.Sites))
	var total int64
	// Each grouping's factors once, and none already cached: passes
	// share them (an evaluation's robust value and lower bound, say).
	seen := map[factorKey]bool{}
	add := func(groups [][]int, inverse bool, per int64) {
		key := factorKey{groupingOf(groups), inverse}
		if _, cached := sv.factors.get(key); cached || seen[key] {
			return
		}
		seen[key] = true
		total += H * int64(len(groups)) * per
	}
	for _, spec := range specs {
		if spec.rep != nil {
			continue // its factors live one round each
		}
		per := 8 * (2*d + packed) // S, inv1, the blocks' factors
		if spec.kind == pevi {
			per += 8 * packed // Linv
		}
		add(spec.groups, spec.kind == pevi, per)
		if spec.siteNu {
			add(singletons(int(K)), false, 8*(2*d+packed))
		}
	}
	return total
}

// roundFactors builds step h's factors of every pass in ps from the
// table's Grams (see [buildFactors]).
func (sv *Solver) roundFactors(ctx context.Context, ps []*passState, h int) error {
	cells, err := sv.st.StepGrams(ctx, h)
	if err != nil {
		return err
	}
	return buildFactors(ctx, &sv.st.Layout, sv.settings, cells, ps, h)
}

// buildFactors builds step h's factors of every pass in ps from the step's
// Gram per site (cells), each distinct (grouping, inverse) once, in
// parallel, as factorsFor builds them: each group's Grams in member order.
func buildFactors(ctx context.Context, l *Layout, s Settings, cells []Gram, ps []*passState, h int) error {
	K := len(cells)
	type want struct {
		groups  [][]int
		inverse bool
		out     []*Factor // the step's factor per group
	}
	var wants []*want
	byKey := map[factorKey]*want{}
	need := func(groups [][]int, inverse bool) *want {
		key := factorKey{groupingOf(groups), inverse}
		w := byKey[key]
		if w == nil {
			w = &want{groups: groups, inverse: inverse, out: make([]*Factor, len(groups))}
			byKey[key] = w
			wants = append(wants, w)
		}
		return w
	}
	type use struct {
		dst []*Factor
		w   *want
	}
	var uses []use
	for _, p := range ps {
		if p.rep != nil {
			continue // its own factors (repRound)
		}
		uses = append(uses, use{p.factors[(h-1)*len(p.groups) : h*len(p.groups)], need(p.groups, p.kind == pevi)})
		if p.siteNu {
			uses = append(uses, use{p.siteFactors[(h-1)*K : h*K], need(singletons(K), false)})
		}
	}
	g := workers.NewGroup(ctx, s.Workers)
	for _, w := range wants {
		for gi, members := range w.groups {
			g.Go(func(ctx context.Context) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				grams := make([]*Gram, len(members))
				for i, k := range members {
					grams[i] = &cells[k]
				}
				f, err := NewFactor(l, grams, s.Lambda, w.inverse)
				if err != nil {
					return fmt.Errorf("step %d, group %d: %w", h, gi, err)
				}
				w.out[gi] = f
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, u := range uses {
		copy(u.dst, u.w.out)
	}
	return nil
}

// penalty kinds
type penalty int

const (
	featurewise penalty = iota // Algorithm 1: beta phi^T m
	pevi                       // PEVI: beta sqrt(phi^T Lambda^-1 phi)
)

// StepCoef holds what one step of a policy needs to evaluate Qhat.
type StepCoef struct {
	// W and M are Algorithm 1's w_h (row-min of nu) and m_h (row-max of
	// sqrt diag Lambda^{-1}); for a PEVI run, W is nu_h and M is empty.
	W, M []float64
	// Linv is Lambda_h^{-1} block by block (packed lower triangles), for PEVI.
	Linv []float64
	// Nu holds each group's nu_h (Algorithm 1 only; not stored in the
	// policy artifact): the Delta_h diagnostics use it.
	Nu [][]float64 `json:"-"`
	// SiteNu holds each site's own nu_h at the same Vhat_{h+1}, and
	// Delta[g] is Delta_{h,g}, the largest distance from a member's nu_h
	// to group g's (Delta_h diagnostics only).
	SiteNu [][]float64 `json:"-"`
	Delta  []float64   `json:"-"`
	// NoEvidence counts the step's data rows whose decision had no
	// evidence (every Qhat 0), weighted.
	NoEvidence float64 `json:"-"`
	// NoEvidenceBySite is NoEvidence per site; Penalty sums beta phi^T m
	// over the step's rows and actions, PenaltyTerms counts the terms.
	NoEvidenceBySite []float64 `json:"-"`
	Penalty          float64   `json:"-"`
	PenaltyTerms     float64   `json:"-"`
	// Cond holds each group's condition number of Lambda_h^g (see
	// [Factor.Cond]), a diagnostic (condition.go).
	Cond []float64 `json:"-"`

	// comb holds W - beta M for beta = combBeta, set by setPenalized
	// before any concurrent use.
	comb     []float64
	combBeta float64
}

// setPenalized stores W - beta M, the coefficient of Qbar: Qbar_h(s,a) =
// phi(s,a)^T (W - beta M), one dot product per action. A policy read back
// from its artifact computes the same bits.
func (c *StepCoef) setPenalized(beta float64) {
	c.comb = make([]float64, len(c.W))
	for i := range c.W {
		c.comb[i] = c.W[i] - beta*c.M[i]
	}
	c.combBeta = beta
}

// penalized returns W - beta M, from the cache when it holds this beta.
func (c *StepCoef) penalized(beta float64) []float64 {
	if c.comb != nil && c.combBeta == beta {
		return c.comb
	}
	comb := make([]float64, len(c.W))
	for i := range c.W {
		comb[i] = c.W[i] - beta*c.M[i]
	}
	return comb
}

// Run is one backward pass: a grouping, a penalty and its beta.
type Run struct {
	Beta  float64
	Steps []StepCoef
	// V1 holds Vhat_1 at each step-1 row of the run's sites (other rows 0).
	V1 []float64
	// Rows is the number of step-1 rows in the run (weighted).
	Rows float64
	// V[h-1] holds Vhat_h at every row of step h (only when asked for).
	V [][]float64
	// reps holds a replicated pass's values.
	reps []ReplicateValue
}

func singletons(K int) [][]int {
	g := make([][]int, K)
	for k := range g {
		g[k] = []int{k}
	}
	return g
}

// backward runs the pessimistic backward recursion for groups with the
// given penalty. It is Algorithm 1 for featurewise penalties and PEVI (one
// group) otherwise.
func (sv *Solver) backward(ctx context.Context, groups [][]int, kind penalty, beta float64) (*Run, error) {
	key := keyOfRun(groups, kind, beta)
	if r, ok := sv.runs[key]; ok {
		return r, nil
	}
	r, err := sv.pass(ctx, passSpec{groups: groups, kind: kind, beta: beta})
	if err != nil {
		return nil, err
	}
	if sv.runs == nil {
		sv.runs = map[runKey]*Run{}
	}
	sv.runs[key] = r
	return r, nil
}

// passSpec describes one backward pass.
type passSpec struct {
	groups [][]int
	kind   penalty
	beta   float64
	// follow, when set, evaluates that policy: Vhat_h(s) is this pass's
	// Qhat_h(s, a) at the action follow recommends, instead of the max.
	follow *Policy
	// followOn, when set, holds the states follow decides on (see
	// [EvaluateOptions].DecideOn).
	followOn *traj.Table
	// given, when set, holds follow's decisions at every row.
	given givenDecisions
	// siteNu also solves each site's own regression at the same V (for
	// Delta_h); keepV keeps Vhat_h at every step's rows.
	siteNu, keepV bool
	// rep, when set, makes the pass stand for that many weighted copies of
	// the robust pass over singleton groups and of every site's own pass,
	// all following follow with beta 0 (see [repState]).
	rep *Replicates
	// keepAct keeps follow's action at the rows of the step last valued
	// ([passState].act), beside the values.
	keepAct bool
	// skip, when set, leaves out the rows of one fold's trajectories, as
	// if weighted 0 (a lockstep run, [SolveLockstep]).
	skip *foldSkip
}

func (sv *Solver) pass(ctx context.Context, ps passSpec) (*Run, error) {
	runs, err := sv.passes(ctx, []passSpec{ps})
	if err != nil {
		return nil, err
	}
	return runs[0], nil
}

// passState is one pass's working state in [Solver.passes].
type passState struct {
	passSpec
	factors, siteFactors []*Factor
	inRun                []bool
	run                  *Run
	// vals[u] holds Vhat_{h+1} at the rows of step u during round h (nil
	// for u = H+1): round h needs step h+1, or every step when stationary.
	vals [][]float64
	// rhs holds the round's right-hand side per site (nil outside the run).
	rhs [][]float64
	// rep is a replicated pass's state (nil for others).
	rep *repState
	// act holds follow's action at the rows of the step last valued (with
	// keepAct).
	act []int32
}

// passes runs several backward passes in lockstep, round h of every pass
// before round h-1 of any: each round reads the step's rows once for all
// of them. Every pass computes exactly what it would alone.
func (sv *Solver) passes(ctx context.Context, specs []passSpec) ([]*Run, error) {
	return sv.passesWith(ctx, specs, nil)
}

// passesWith is [Solver.passes] with hooks.
func (sv *Solver) passesWith(ctx context.Context, specs []passSpec, hooks *driveHooks) ([]*Run, error) {
	st := sv.st
	t := st.Table
	H := t.H
	K := len(t.Sites)
	stationary := sv.settings.Stationary
	ps := make([]*passState, len(specs))
	// The factors of every (group, step) are built once and kept for
	// later passes (compare's methods, the penalty path), unless they
	// would take more than the factor cache bound (tuning): then each round builds its
	// step's factors, shared by the round's passes, and drops them after
	// (the statistics of large tabular maps are O(G d) instead of
	// O(G H d)). The factors are the same either way.
	perRound := !stationary && sv.factorBytes(specs) > sv.settings.Tuning.factorCache()
	// Per round, each round times its own factors.
	stopFactors := func() {}
	if !perRound {
		stopFactors = timing.Start(ctx, "solve: factors")
	}
	for i, spec := range specs {
		if spec.kind == pevi && len(spec.groups) != 1 {
			panic("solve: a PEVI run has one group")
		}
		p := newPassState(spec, K, H)
		switch {
		case spec.rep != nil:
			// Its factors are its own, per round and replicate.
			p.rep = &repState{Replicates: spec.rep}
		case perRound:
			p.factors = make([]*Factor, H*len(spec.groups))
			if spec.siteNu {
				p.siteFactors = make([]*Factor, H*K)
			}
		default:
			var err error
			if p.factors, err = sv.factorsFor(ctx, spec.groups, spec.kind == pevi); err != nil {
				stopFactors()
				return nil, err
			}
			if spec.siteNu {
				if p.siteFactors, err = sv.factorsFor(ctx, singletons(K), false); err != nil {
					stopFactors()
					return nil, err
				}
			}
		}
		ps[i] = p
	}
	stopFactors()
	if _, err := drive(ctx, tableSource{sv}, H, ps, perRound, hooks); err != nil {
		return nil, err
	}
	runs := make([]*Run, len(ps))
	for i, p := range ps {
		runs[i] = p.run
		if p.rep != nil {
			p.run.reps = p.rep.out
		}
	}
	return runs, nil
}

// A stepSource supplies the rows that each round of the backward pass
// reads: the in-memory table ([tableSource]) or windows of two steps read
// from files ([streamSource]). From them a round forms sums per site: the
// Grams of step h (factors) and the right-hand side sum phi (r +
// Vhat_{h+1}(s')) given the passes' coefficients of round h+1 (rhsRound,
// after valueRound); a [Round] then solves from the sums alone. A source
// that keeps its rows elsewhere (a federated site) forms the same sums
// with the same sweeps over its own rows ([Round.RHS]), and its
// coordinator solves them with the same [Round] ([Round.Solve]).
type stepSource interface {
	// round returns a solver over the rows round h reads: step h's, with
	// step h+1's (their next states), or every step's when stationary.
	round(ctx context.Context, h int) (*Solver, error)
}

// tableSource is an in-memory table: every round reads the same solver.
type tableSource struct{ sv *Solver }

func (s tableSource) round(context.Context, int) (*Solver, error) { return s.sv, nil }

// drive runs the passes ps in lockstep over src, rounds H..1, round h of
// every pass before round h-1 of any: each round reads the step's rows once
// for all of them, and every pass computes exactly what it would alone.
// Round h evaluates Vhat_{h+1} at the rows of step h+1 with round h+1's
// coefficients (at every step's rows when stationary: they are the next
// states of round h), builds step h's factors when perRound (otherwise the
// passes hold every step's), and solves step h's regressions; after round
// 1, Vhat_1 is evaluated at the rows of step 1. With hooks, valued(sv, u)
// follows the evaluation at step u's rows and solved(sv, h) round h's
// coefficients. It returns the last round's solver.
func drive(ctx context.Context, src stepSource, H int, ps []*passState, perRound bool, hooks *driveHooks) (*Solver, error) {
	var sv *Solver
	var rd *Round
	for h := H; h >= 1; h-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		if sv, err = src.round(ctx, h); err != nil {
			return nil, err
		}
		if rd == nil {
			rd = &Round{Settings: sv.settings, ps: ps}
		}
		if h < H {
			if err := sv.valueRound(ctx, ps, h+1); err != nil {
				return nil, err
			}
			if err := hooks.valued(sv, h+1); err != nil {
				return nil, err
			}
			if err := hooks.valuedPasses(ps, h+1); err != nil {
				return nil, err
			}
		}
		if perRound {
			stop := timing.Start(ctx, "solve: factors")
			err := sv.roundFactors(ctx, ps, h)
			stop()
			if err != nil {
				return nil, err
			}
		}
		stop := timing.Start(ctx, "solve: right-hand sides")
		err = sv.rhsRound(ctx, ps, h)
		stop()
		if err != nil {
			return nil, err
		}
		stop = timing.Start(ctx, "solve: coefficients")
		rd.solve(h, sv.st.Map.Dim(), perRound)
		stop()
		hooks.solved(sv, h)
	}
	if err := sv.valueRound(ctx, ps, 1); err != nil {
		return nil, err
	}
	if err := hooks.valued(sv, 1); err != nil {
		return nil, err
	}
	if err := hooks.valuedPasses(ps, 1); err != nil {
		return nil, err
	}
	for _, p := range ps {
		p.run.V1 = p.vals[1]
		p.run.Rows = runRows(&sv.st.Table.Steps[0], p.inRun)
	}
	return sv, nil
}

// driveHooks are what [SolveStreamed] does beside the passes (nil: none).
type driveHooks struct {
	onValued func(sv *Solver, u int) error
	onSolved func(sv *Solver, h int)
	// onPasses follows onValued with the passes themselves: their values
	// (vals[u]) and kept actions at step u's rows.
	onPasses func(ps []*passState, u int) error
}

func (k *driveHooks) valuedPasses(ps []*passState, u int) error {
	if k == nil || k.onPasses == nil {
		return nil
	}
	return k.onPasses(ps, u)
}

func (k *driveHooks) valued(sv *Solver, u int) error {
	if k == nil || k.onValued == nil {
		return nil
	}
	return k.onValued(sv, u)
}

func (k *driveHooks) solved(sv *Solver, h int) {
	if k != nil && k.onSolved != nil {
		k.onSolved(sv, h)
	}
}

// valueRound sets every pass's Vhat_u, with round u's coefficients, at the
// rows of step u (at steps 2..H when stationary and u > 1: the next states
// of round u-1's transitions), and step u's evidence and penalty
// diagnostics.
func (sv *Solver) valueRound(ctx context.Context, ps []*passState, u int) error {
	t := sv.st.Table
	H := t.H
	vs := make([]valSpec, len(ps))
	next := make([][][]float64, len(ps))
	for i, p := range ps {
		vs[i] = valSpec{inRun: p.inRun, kind: p.kind, coef: &p.run.Steps[u-1], beta: p.beta, follow: p.follow, followOn: p.followOn, given: p.given.at(t, u), decide: p.rep != nil, keepAct: p.keepAct, skip: p.skip}
		next[i] = make([][]float64, H+2)
	}
	lo, hi := u, u
	if sv.settings.Stationary && u > 1 {
		lo, hi = 2, H
	}
	for tt := lo; tt <= hi; tt++ {
		stop := timing.Start(ctx, "solve: values")
		outs, err := sv.values(ctx, &t.Steps[tt-1], u, vs)
		stop()
		if err != nil {
			return err
		}
		for i, p := range ps {
			o := outs[i]
			if p.rep != nil {
				p.rep.act = o.act
				if u == 1 {
					if err := sv.repValues(ctx, p.rep); err != nil {
						return err
					}
				}
				continue
			}
			next[i][tt] = o.v
			if tt != u {
				continue
			}
			if p.keepAct {
				p.act = o.act
			}
			coef := &p.run.Steps[u-1]
			coef.NoEvidenceBySite, coef.Penalty, coef.PenaltyTerms = o.noev, o.pen, o.npen
			for _, x := range o.noev {
				coef.NoEvidence += x
			}
			if p.keepV {
				p.run.V[u-1] = o.v
			}
		}
	}
	for i, p := range ps {
		p.vals = next[i]
	}
	return nil
}

// runRows returns the weighted number of step's rows whose site is in the
// run: site by site, which adds the rows in their order (unweighted, an
// exact count).
func runRows(step *traj.Step, inRun []bool) float64 {
	rows := 0.0
	for k, in := range inRun {
		if !in {
			continue
		}
		lo, hi := int(step.SiteStart[k]), int(step.SiteStart[k+1])
		if step.Weight == nil {
			rows += float64(hi - lo)
			continue
		}
		for _, w := range step.Weight[lo:hi] {
			rows += w
		}
	}
	return rows
}

// rhsRound sets every pass's right-hand side of round h, one per (pass,
// site), each summed serially (over steps in order when stationary); one
// task per site serves every pass that site is in.
func (sv *Solver) rhsRound(ctx context.Context, ps []*passState, h int) error {
	t := sv.st.Table
	st := sv.st
	H, K := t.H, len(t.Sites)
	d := st.Map.Dim()
	stationary := sv.settings.Stationary
	// Right-hand sides, one per (pass, site), each summed serially
	// (over steps in order when stationary); one task per site
	// serves every pass that site is in.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(sv.settings.Workers))
	for _, p := range ps {
		p.rhs = make([][]float64, K)
	}
	for k := range t.Sites {
		var in []*passState
		for _, p := range ps {
			if p.inRun[k] && p.rep == nil {
				in = append(in, p)
			}
		}
		if len(in) == 0 {
			continue
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			for tt := 1; tt <= H; tt++ {
				if !stationary && tt != h {
					continue
				}
				vnexts := make([][]float64, len(in))
				for i, p := range in {
					vnexts[i] = p.vals[tt+1]
				}
				step := &t.Steps[tt-1]
				outs := st.rhsMulti(tt, int(step.SiteStart[k]), int(step.SiteStart[k+1]), vnexts)
				for i, p := range in {
					if p.rhs[k] == nil {
						if !stationary {
							p.rhs[k] = outs[i]
							continue
						}
						p.rhs[k] = make([]float64, d)
					}
					for x, v := range outs[i] {
						p.rhs[k][x] += v
					}
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, p := range ps {
		if p.rep != nil {
			if err := sv.repRound(ctx, p, h); err != nil {
				return err
			}
		}
	}
	return nil
}

// coefficients solves round h's regressions of one pass from its factors
// and its right-hand side per site, and sets the step's coefficients: each
// group's right-hand sides summed in member order, nu = Lambda^{-1} rhs,
// then w = row-min of nu and m = row-max of sqrt diag Lambda^{-1} in group
// order (featurewise), or nu and Lambda^{-1} (PEVI).
func coefficients(p *passState, h, d int, stationary bool) {
	// fi is the index of group gi's factor at step h: one per (step,
	// group), or one per group when transitions are stationary.
	fi := func(h, gi, G int) int {
		if stationary {
			return gi
		}
		return (h-1)*G + gi
	}
	G := len(p.groups)
	// nu per group, then the row-min and row-max.
	nu := make([][]float64, G)
	for gi, members := range p.groups {
		sum := make([]float64, d)
		for _, k := range members {
			for i, v := range p.rhs[k] {
				sum[i] += v
			}
		}
		nu[gi] = make([]float64, d)
		p.factors[fi(h, gi, G)].SolveTo(nu[gi], sum)
	}
	coef := &p.run.Steps[h-1]
	coef.Cond = factorConds(p.factors, h, G, fi)
	if p.siteNu {
		K := len(p.rhs)
		coef.SiteNu = make([][]float64, K)
		for k := 0; k < K; k++ {
			if p.rhs[k] == nil {
				continue
			}
			coef.SiteNu[k] = make([]float64, d)
			p.siteFactors[fi(h, k, K)].SolveTo(coef.SiteNu[k], p.rhs[k])
		}
	}
	if p.kind == featurewise {
		coef.W = slices.Clone(nu[0])
		coef.M = slices.Clone(p.factors[fi(h, 0, G)].S)
		for gi := 1; gi < G; gi++ {
			s := p.factors[fi(h, gi, G)].S
			for i := 0; i < d; i++ {
				coef.W[i] = min(coef.W[i], nu[gi][i])
				coef.M[i] = max(coef.M[i], s[i])
			}
		}
		coef.Nu = nu
		if p.siteNu {
			coef.Delta = delta(p.groups, nu, coef.SiteNu)
		}
		coef.setPenalized(p.beta)
	} else {
		coef.W = nu[0]
		coef.Linv = p.factors[fi(h, 0, G)].Linv
	}
}

// valSpec is one pass's part of a [Solver.values] sweep.
type valSpec struct {
	inRun  []bool
	kind   penalty
	coef   *StepCoef
	beta   float64
	follow *Policy
	// followOn holds the states follow decides on (nil: the rows' own).
	followOn *traj.Table
	// given, when set, holds follow's decisions at the step's rows.
	given givenDecisions
	// decide records follow's action at every row instead of a value
	// (a replicated pass: [valOut].act); keepAct records it beside the
	// value.
	decide, keepAct bool
	// skip, when set, leaves the rows of one fold's trajectories out:
	// their value stays 0 and they count in no diagnostic, as rows of
	// weight 0 would.
	skip *foldSkip
}

// followState is the state the followed policy decides on at row j of
// step h, whose state under the pass's map is state.
func (sp *valSpec) followState(h, j int, state []float64) []float64 {
	if sp.followOn == nil {
		return state
	}
	w := sp.followOn.W
	return sp.followOn.Steps[h-1].State[j*w : (j+1)*w]
}

// decision returns the followed policy's action at row j of step h,
// whose state under the pass's map is state, and whether it has
// evidence: the given decision, or the policy's own.
func (sp *valSpec) decision(h, j int, state, fq []float64, frow *phiRow, lr *lazyRuns) (int, bool) {
	if sp.given.acts != nil {
		return int(sp.given.acts[j]), sp.given.evidence[j]
	}
	a, _, ev := sp.follow.actLazy(h, sp.followState(h, j, state), fq, frow, lr)
	return a, ev
}

// valOut is one pass's result of a [Solver.values] sweep: Vhat_h at the
// step's rows (0 outside the run), the weighted count per site of rows
// whose decision has no evidence and, for featurewise passes that follow no
// policy, the sum over rows and actions of the penalty beta phi^T m with
// its number of terms.
type valOut struct {
	v, noev   []float64
	pen, npen float64
	act       []int32
}

// valueChunks is the number of row ranges a values sweep is split into;
// fixed, so that the diagnostic sums do not depend on the workers.
const valueChunks = 32

// values sweeps the rows of one step once and returns, for each pass,
// Vhat_h at every row and its diagnostics (see [valOut]). With follow,
// Vhat_h is the pass's Qhat_h at the action follow recommends.
func (sv *Solver) values(ctx context.Context, step *traj.Step, h int, specs []valSpec) ([]valOut, error) {
	K := len(sv.st.Table.Sites)
	outs := make([]valOut, len(specs))
	for i := range outs {
		if specs[i].decide {
			outs[i].act = make([]int32, step.Len())
			continue
		}
		if specs[i].keepAct {
			outs[i].act = make([]int32, step.Len())
		}
		outs[i].v = make([]float64, step.Len())
	}
	// active[k] lists the passes that site k's rows belong to.
	active := make([][]int, K)
	for i := range specs {
		for k := range active {
			if specs[i].inRun[k] {
				active[k] = append(active[k], i)
			}
		}
	}
	lb := newLinearBatch(&sv.st.Map, specs)
	chunks := chunkRanges(step.Len(), valueChunks)
	noevChunk := make([][][]float64, len(chunks)) // [chunk][spec][site]
	penChunk := make([][][2]float64, len(chunks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(sv.settings.Workers))
	for ci, c := range chunks {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			noevChunk[ci], penChunk[ci] = sv.valuesChunk(step, h, specs, lb, active, c[0], c[1], outs)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i := range outs {
		outs[i].noev = make([]float64, K)
		for ci := range chunks {
			for k, x := range noevChunk[ci][i] {
				outs[i].noev[k] += x
			}
			outs[i].pen += penChunk[ci][i][0]
			outs[i].npen += penChunk[ci][i][1]
		}
	}
	return outs, nil
}

// valuesChunk is [Solver.values] on the rows lo..hi of step: it sets
// outs[i].v there and returns, per pass, the weighted rows without
// evidence per site and the penalty sums of the chunk. The passes in lb
// (nil: none) take their largest Qhat from the batch.
func (sv *Solver) valuesChunk(step *traj.Step, h int, specs []valSpec, lb *linearBatch, active [][]int, lo, hi int, outs []valOut) (ne [][]float64, pen [][2]float64) {
	t := sv.st.Table
	K := len(t.Sites)
	c := &valuesScratch{sv: sv, h: h, top: float64(t.H - h + 1), q: make([]float64, t.A), scratch: make([]float64, t.A), fq: make([]float64, t.A)}
	ne = make([][]float64, len(specs))
	for i := range ne {
		ne[i] = make([]float64, K)
	}
	pen = make([][2]float64, len(specs))
	if lb != nil {
		c.batch = make([]float64, lb.n)
	}
	k := step.Site(lo)
	for j := lo; j < hi; j++ {
		for int32(j) >= step.SiteStart[k+1] {
			k++
		}
		if len(active[k]) == 0 {
			continue
		}
		wt := 1.0
		if step.Weight != nil {
			wt = step.Weight[j]
		}
		state := step.State[j*t.W : (j+1)*t.W]
		c.row.prepare(&sv.st.Map, state)
		// The batched passes first, together (their sums are each
		// pass's own, in row order whatever the order of passes).
		batched := lb != nil && c.row.block
		if batched {
			lb.bests(&c.row.b, c.batch, step.Traj[j])
			for b, i := range lb.spec {
				sp := &specs[i]
				if !sp.inRun[k] || sp.skip.drops(step.Traj[j]) {
					continue
				}
				best := clip(c.batch[b], c.top)
				if j%8 == 0 {
					c.addPenalty(&pen[i], sp, wt)
				}
				outs[i].v[j] = best
				if best == 0 {
					ne[i][k] += wt
				}
			}
		}
		// The followed policy's decision at this row (fol's), made once
		// for every pass that follows it.
		c.fol = nil
		for _, i := range active[k] {
			sp := &specs[i]
			if batched && lb.pos[i] >= 0 || sp.skip.drops(step.Traj[j]) {
				continue
			}
			best, noEvidence, decided := c.value(sp, j, state, &outs[i])
			if decided {
				continue
			}
			// The penalty's scale is a diagnostic of a solved policy:
			// every 8th row estimates it well at an eighth of the cost.
			// A pass that follows a policy (an evaluation) reports only
			// its values.
			if sp.kind == featurewise && sp.follow == nil && j%8 == 0 {
				c.addPenalty(&pen[i], sp, wt)
			}
			outs[i].v[j] = best
			if noEvidence {
				ne[i][k] += wt
			}
		}
	}
	return ne, pen
}

// valuesScratch is one chunk's working memory in valuesChunk: the row's
// phi, the followed policy's decision at the row (and its scratch, as its
// map may differ) and the Qhat buffers.
type valuesScratch struct {
	sv  *Solver
	h   int
	top float64
	// row holds the passes' phi; frow and lr the followed policy's
	// scratch.
	row, frow phiRow
	lr        lazyRuns
	// fol is the policy whose decision at the row fa (evidence fev) is.
	fol                   *Policy
	fa                    int
	fev                   bool
	q, scratch, fq, batch []float64
}

// addPenalty adds row's sample of sp's penalty scale to pen, weight wt.
func (c *valuesScratch) addPenalty(pen *[2]float64, sp *valSpec, wt float64) {
	c.row.dots(sp.coef.M, c.scratch)
	for _, x := range c.scratch {
		pen[0] += wt * sp.beta * x
	}
	pen[1] += wt * float64(c.sv.st.Table.A)
}

// follow makes sp's followed policy's decision at row j, once per row
// for every pass that follows it.
func (c *valuesScratch) follow(sp *valSpec, j int, state []float64) {
	if sp.follow != c.fol {
		c.fa, c.fev = sp.decision(c.h, j, state, c.fq, &c.frow, &c.lr)
		c.fol = sp.follow
	}
}

// value returns sp's value at row j and whether the row has no evidence
// for it; a pass that only records decisions records its action in out
// and reports decided.
func (c *valuesScratch) value(sp *valSpec, j int, state []float64, out *valOut) (best float64, noEvidence, decided bool) {
	l := &c.sv.st.Layout
	switch {
	case sp.decide:
		c.follow(sp, j, state)
		out.act[j] = int32(c.fa)
		return 0, false, true
	case sp.follow != nil:
		c.follow(sp, j, state)
		if sp.keepAct {
			out.act[j] = int32(c.fa)
		}
		if sp.kind == featurewise {
			// Only the followed action's Qhat is needed.
			best = linearAt(&c.row, sp.coef.penalized(sp.beta), c.top, c.fa)
		} else {
			sp.coef.qValues(sp.kind, sp.beta, c.top, l, &c.row, c.q)
			best = c.q[c.fa]
		}
		return best, !c.fev, false
	case sp.kind == pevi:
		best = peviBest(&c.row, l, sp.coef.W, sp.coef.Linv, sp.beta, c.top, c.q)
	default:
		best = linearBest(&c.row, sp.coef.penalized(sp.beta), c.top, c.q)
	}
	return best, best == 0, false
}

// chunkRanges splits 0..n into about parts contiguous ranges.
func chunkRanges(n, parts int) [][2]int {
	if n == 0 {
		return nil
	}
	size := max(1, (n+parts-1)/parts)
	var out [][2]int
	for s := 0; s < n; s += size {
		out = append(out, [2]int{s, min(n, s+size)})
	}
	return out
}

// WithPenalty returns a solver over the same statistics whose penalty
// settings (C, Xi, Beta) are those of s. It shares the factorisations,
// which do not depend on the penalty, so a penalty path costs one
// backward pass per point and no refactorisation.
func (sv *Solver) WithPenalty(s Settings) *Solver {
	settings := sv.settings
	settings.C, settings.Xi, settings.Beta, settings.BetaSet = s.C, s.Xi, s.Beta, s.BetaSet
	return &Solver{st: sv.st, settings: settings, factors: sv.factors, beh: sv.beh}
}

// SampleRows is the number of data rows above which diagnostics of
// combined policies (pevi-avg, pevi-min, policies read from files) and the
// disagreement between methods are computed on a systematic sample: every
// ceil(rows/SampleRows)-th row in step order. Shares estimated from 200,000
// rows are within about 0.2 percentage points.
const SampleRows = 200_000

// SampleStride returns the stride of the systematic sample of t's rows.
func SampleStride(t *traj.Table) int {
	return Tuning{}.stride(t.Rows)
}

// ActAll returns p's recommended action and whether it has evidence at
// every stride-th row of t, rows in step order (step 1's rows, then step
// 2's, ...), computed in parallel; the result does not depend on workers.
func ActAll(ctx context.Context, p *Policy, t *traj.Table, nworkers, stride int) ([]int32, []bool, error) {
	acts, evs, err := ActAllMany(ctx, []*Policy{p}, t, nworkers, stride)
	if err != nil {
		return nil, nil, err
	}
	return acts[0], evs[0], nil
}

// ActAllMany is [ActAll] for several policies in one sweep: pevi-avg and
// pevi-min policies over the same runs share each run's terms at each row,
// PEVI policies compute the Qhat of only the actions that could be
// chosen (see decideLazy), and single-run linear policies over one
// action-block map read each row's features once and form their Qhat
// together ([newPolicyBatch]).
func ActAllMany(ctx context.Context, ps []*Policy, t *traj.Table, nworkers, stride int) ([][]int32, [][]bool, error) {
	stride = max(stride, 1)
	off := make([]int, t.H+1)
	for h := 1; h <= t.H; h++ {
		off[h] = off[h-1] + t.Steps[h-1].Len()
	}
	n := (off[t.H] + stride - 1) / stride
	actions := make([][]int32, len(ps))
	evidence := make([][]bool, len(ps))
	for i := range ps {
		actions[i], evidence[i] = make([]int32, n), make([]bool, n)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(nworkers))
	for h := 1; h <= t.H; h++ {
		step := &t.Steps[h-1]
		lb := newPolicyBatch(ps, h)
		for _, c := range chunkRanges(step.Len(), 16) {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				ac := newActors(ps, t.A)
				var row phiRow
				var qb, q []float64
				if lb != nil {
					qb, q = make([]float64, t.A*lb.n), make([]float64, t.A)
				}
				// The first global row index >= off+c[0] that is a multiple
				// of stride.
				first := (off[h-1] + c[0] + stride - 1) / stride * stride
				for gj := first; gj < off[h-1]+c[1]; gj += stride {
					j := gj - off[h-1]
					state := step.State[j*t.W : (j+1)*t.W]
					batched := false
					if lb != nil {
						row.prepare(&ps[lb.spec[0]].Map, state)
						if batched = row.block; batched {
							lb.dots(&row.b, qb)
						}
					}
					for i, p := range ps {
						var a int
						var ev bool
						if batched && lb.pos[i] >= 0 {
							a, ev = lb.decide(p, h, &row, qb, lb.pos[i], q)
						} else {
							a, ev = ac.act(i, h, state)
						}
						actions[i][gj/stride], evidence[i][gj/stride] = int32(a), ev
					}
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return actions, evidence, nil
}

// actors decide for several policies, row after row, each policy in
// turn at a row: pevi-avg and pevi-min policies over the same runs share
// each run's terms, and PEVI policies compute the Qhat of only the actions
// that could be chosen (see decideLazy). Its scratch memory is reused from
// row to row: one per goroutine.
type actors struct {
	ps []*Policy
	// share[i] is the earlier policy whose runs policy i combines too, or
	// -1; lrs[i] holds policy i's lazy terms at the row when lazy[i].
	share []int
	rows  []phiRow
	lrs   []lazyRuns
	lazy  []bool
	q     []float64
}

func newActors(ps []*Policy, A int) *actors {
	ac := &actors{ps: ps, share: make([]int, len(ps)), rows: make([]phiRow, len(ps)),
		lrs: make([]lazyRuns, len(ps)), lazy: make([]bool, len(ps)), q: make([]float64, A)}
	for i, p := range ps {
		ac.share[i] = -1
		for j := 0; j < i && combinesRuns(p); j++ {
			if combinesRuns(ps[j]) && sameRuns(p, ps[j]) {
				ac.share[i] = j
				break
			}
		}
	}
	return ac
}

// act returns policy i's action at step h in state and whether it has
// evidence, as [Policy.Act]; the policies are to be asked in order at each
// row (a policy's shared terms come from an earlier one's).
func (ac *actors) act(i, h int, state []float64) (int, bool) {
	p := ac.ps[i]
	if src := ac.share[i]; src >= 0 {
		if ac.lazy[src] {
			if a, _, ev, ok := p.decideLazy(h, state, &ac.lrs[src]); ok {
				return a, ev
			}
		}
		a, _, ev := p.act(h, state, ac.q, &ac.rows[i])
		return a, ev
	}
	row := &ac.rows[i]
	row.prepare(&p.Map, state)
	ac.lazy[i] = p.penalty() == pevi && ac.lrs[i].init(p, h, row)
	if ac.lazy[i] {
		if a, _, ev, ok := p.decideLazy(h, state, &ac.lrs[i]); ok {
			return a, ev
		}
	}
	a, _, ev := p.actRow(h, row, ac.q)
	return a, ev
}

// combinesRuns reports whether p combines several PEVI runs.
func combinesRuns(p *Policy) bool {
	return p.Method == PEVIAvg || p.Method == PEVIMin
}

// sameRuns reports whether p and o hold the same runs (the same
// coefficients, shared by a solver's cache, and the same betas).
func sameRuns(p, o *Policy) bool {
	if len(p.Runs) != len(o.Runs) || p.H != o.H || p.Map.Kind != o.Map.Kind {
		return false
	}
	for r := range p.Runs {
		a, b := &p.Runs[r], &o.Runs[r]
		if a.Beta != b.Beta || len(a.Steps) == 0 || len(a.Steps) != len(b.Steps) || &a.Steps[0] != &b.Steps[0] {
			return false
		}
	}
	return true
}
