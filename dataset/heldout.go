package dataset

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/solve"
)

// MethodHeldOut is a method's held-out record in a comparison
// (compare.json's methods[].heldout): the keys of a candidate of a
// cross-fitted choice ([ScoredSettings]: the score, the worst site, every
// site's held-out value with its interval, the share of held-out
// decisions without evidence), the method, and for every method but
// sitewise its difference from sitewise, paired.
type MethodHeldOut struct {
	Method          string       `json:"method"`
	Score           *float64     `json:"score"`
	WorstSite       string       `json:"worst_site"`
	Sites           []ScoredSite `json:"sites"`
	NoEvidenceShare float64      `json:"no_evidence_share"`
	// VsSitewise is the method's held-out value minus sitewise's: the
	// worst sites' (each method's own worst site) and every site's, each
	// with the interval from the same bootstrap replicates of the same
	// held-out rows (null for sitewise, or without a sitewise row).
	VsSitewise *HeldOutDiff `json:"vs_sitewise"`
}

// HeldOutDiff is a held-out difference between two policies: the worst
// sites' values and each site's, with their intervals.
type HeldOutDiff struct {
	Value  *float64     `json:"value"`
	CILow  *float64     `json:"ci_low"`
	CIHigh *float64     `json:"ci_high"`
	Sites  []ScoredSite `json:"sites"`
}

// HeldOutComparison says how a comparison's methods were scored held out
// (compare.json's heldout): the folds, their seed, the bootstrap
// replicates per fold, the intervals' level, the estimator, and Best, the
// method of the highest score (ties: the earlier method; "" when no
// method has a score). Note says what the scores mean when the methods'
// settings were chosen on the same folds.
type HeldOutComparison struct {
	Folds     int     `json:"folds"`
	Seed      uint64  `json:"seed"`
	Bootstrap int     `json:"bootstrap"`
	Level     float64 `json:"level"`
	Estimator string  `json:"estimator"`
	Best      string  `json:"best"`
	Note      string  `json:"note,omitempty"`
}

// MethodSpec is one method a comparison scores held out: Method names
// it, and Problem under Settings is what is learned on each fold's
// training rows (the method's problem, or behaviour cloning when its
// settings were chosen and the choice was the fallback).
type MethodSpec struct {
	Method   solve.Method
	Problem  solve.Problem
	Settings solve.Settings
}

// HeldOutMethods scores each method of ms as [Data.HeldOut] scores
// problems, on the same folds and bootstrap replicates (o.Settings,
// Problem, Cs, Lambdas and Stationary are not used), and adds each
// method's paired difference from the sitewise method's (when ms has
// one). It returns the scoring's record and the methods' records in ms'
// order.
//
// The methods under the same settings are learned and evaluated
// together, as the candidates of a choice are; the others are
// cross-fitted apart, on the same folds and replicates (the held-out rows
// and each fold's bootstrap seed fix them), so every difference is
// paired.
func (d *Data) HeldOutMethods(ctx context.Context, o SelectOptions, ms []MethodSpec) (*HeldOutComparison, []*MethodHeldOut, error) {
	if err := d.Held("a cross-fitted evaluation"); err != nil {
		return nil, nil, err
	}
	if d.opts.Disclosure.Active() {
		return nil, nil, optionErr("Disclosure", "", "a cross-fitted evaluation evaluates each held-out fold with a bootstrap, which needs statistics without disclosure control")
	}
	if len(ms) == 0 {
		return nil, nil, optionErr("Problems", "", "no method to score")
	}
	K := cmp.Or(o.Folds, SelectFolds(&d.fmap))
	if K < 2 {
		return nil, nil, optionErr("Folds", fmt.Sprint(o.Folds), "a cross-fit needs at least 2 folds")
	}
	o.Folds = K
	o.Bootstrap = max(cmp.Or(o.Bootstrap, DefaultSelectBootstrap), 0)
	o.Level = cmp.Or(o.Level, DefaultSelectLevel)
	o.Stationary = nil
	fold := Folds(d.table, K, o.Seed)
	cands := make([]Candidate, len(ms))
	reports := make([][]*eval.Report, len(ms))
	noev := make([]float64, len(ms))
	// groups[g]: the methods under one setting, in ms' order.
	var groups [][]int
	for i, m := range ms {
		cands[i] = Candidate{Problem: &ms[i].Problem}
		if m.Problem.Method == solve.Behaviour {
			cands[i] = Candidate{Fallback: true}
		}
		g := slices.IndexFunc(groups, func(g []int) bool { return reflect.DeepEqual(ms[g[0]].Settings, m.Settings) })
		if g < 0 {
			groups = append(groups, nil)
			g = len(groups) - 1
		}
		groups[g] = append(groups[g], i)
	}
	for _, g := range groups {
		og := o
		og.Settings = ms[g[0]].Settings
		gc := make([]Candidate, len(g))
		for x, i := range g {
			gc[x] = cands[i]
		}
		r, ne, err := d.crossFit(ctx, og, gc, fold, K)
		if err != nil {
			return nil, nil, err
		}
		for x, i := range g {
			reports[i], noev[i] = r[x], ne[x]
		}
	}
	sel := d.rank(o, cands, fold, reports, noev)
	hc := &HeldOutComparison{Folds: K, Seed: o.Seed, Bootstrap: o.Bootstrap, Level: o.Level, Estimator: sel.Estimator}
	comb := d.foldCombiner(fold, K, o)
	sw := -1
	for i, m := range ms {
		if m.Method == solve.Sitewise {
			sw = i
			break
		}
	}
	var swd *diffOf
	if sw >= 0 {
		v, r := comb.estimate(reports[sw], sel.Estimator)
		swd = &diffOf{vals: v, reps: r}
	}
	out := make([]*MethodHeldOut, len(ms))
	for i, sc := range sel.Candidates {
		m := &MethodHeldOut{Method: string(ms[i].Method), Score: sc.Score, WorstSite: sc.WorstSite, Sites: sc.Sites, NoEvidenceShare: sc.NoEvidenceShare}
		if swd != nil && i != sw {
			v, r := comb.estimate(reports[i], sel.Estimator)
			m.VsSitewise = comb.difference(d.table.Sites, sel.Estimator, v, r, swd)
		}
		out[i] = m
	}
	if best := bestRow(out); best >= 0 {
		hc.Best = out[best].Method
	}
	return hc, out, nil
}

// foldCombiner returns the combiner of the folds' held-out values per
// site under o (folds, bootstrap, level set).
func (d *Data) foldCombiner(fold []int32, K int, o SelectOptions) *combiner {
	t := d.table
	nS := len(t.Sites)
	n := make([]float64, K*nS)
	s1 := &t.Steps[0]
	for k := 0; k < nS; k++ {
		for j := int(s1.SiteStart[k]); j < int(s1.SiteStart[k+1]); j++ {
			n[int(fold[s1.Traj[j]])*nS+k] += rowWeight(s1, j)
		}
	}
	return &combiner{n: n, K: K, sites: nS, B: o.Bootstrap, level: o.Level}
}

// difference returns vals minus minus: the worst sites' values (each
// side's own minimum over sites) and each site's, with intervals from the
// paired replicates (each replicate's minima for the worst sites).
func (c *combiner) difference(sites []string, estimator string, vals []float64, reps [][]float64, minus *diffOf) *HeldOutDiff {
	a, _ := minOf(vals)
	b, _ := minOf(minus.vals)
	theta := a - b
	lo, hi := math.NaN(), math.NaN()
	if len(reps) > 0 && !math.IsNaN(theta) {
		x := make([]float64, len(reps))
		for r := range reps {
			ra, _ := minOf(reps[r])
			rb, _ := minOf(minus.reps[r])
			x[r] = ra - rb
		}
		lo, hi = eval.BasicCI(theta, x, c.level)
	}
	out := &HeldOutDiff{Value: finite(theta), CILow: finite(lo), CIHigh: finite(hi)}
	for k, s := range sites {
		h := c.heldOut(estimator, vals, reps, k, minus)
		out.Sites = append(out.Sites, ScoredSite{Site: s, Value: finite(h.Value), CILow: finite(h.CILow), CIHigh: finite(h.CIHigh)})
	}
	return out
}
