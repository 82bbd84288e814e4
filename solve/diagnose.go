package solve

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/workers"
)

// NoEvidenceWarn is the share of decisions without evidence above which a
// solve warns loudly.
const NoEvidenceWarn = 0.05

// Diagnostics are the findings that do not stop a solve but that a user
// must see: decisions without evidence, the penalty's scale, and coverage.
type Diagnostics struct {
	// NoEvidenceShare is the share of data rows (weighted) whose decision
	// has no evidence: every action's Qhat is 0.
	NoEvidenceShare float64 `json:"no_evidence_share"`
	// NoEvidenceBySite is the same share per site.
	NoEvidenceBySite map[string]float64 `json:"no_evidence_by_site"`
	// PenaltyShare[h-1] is the mean over step-h rows and actions of the
	// penalty divided by the value range H-h+1: at 1 or more the penalty
	// erases every estimate at that step.
	PenaltyShare []float64 `json:"penalty_share"`
	// Coverage[k][i] counts site k's rows (all steps) whose feature i is
	// nonzero.
	Coverage [][]float64 `json:"-"`
	// Uncovered lists, per site, the features it never observes and the
	// actions behind them.
	Uncovered []Uncovered `json:"uncovered"`
	// EmptyCells lists the (site, step) cells without data.
	EmptyCells []Cell `json:"empty_cells"`
	// Cond[g][h-1] is the condition number of group g's Lambda_h^g (g
	// indexes the policy's Groups; see [Factor.Cond]), as the backward
	// pass factorised it. Condition lists each group's worst step; above
	// [CondWarn] a solve warns. Both are nil for behaviour cloning and for
	// a policy read from a file (its artifact does not keep them).
	Cond      [][]float64    `json:"-"`
	Condition []Conditioning `json:"condition,omitempty"`

	warnings []Warning
}

// Uncovered describes the features one site never observes.
type Uncovered struct {
	Site     string `json:"site"`
	Features int    `json:"features"`
	Of       int    `json:"of"`
	Actions  []int  `json:"actions"`
}

// Cell names a (site, step).
type Cell struct {
	Site string `json:"site"`
	Step int    `json:"step"`
}

// Warnings returns the diagnostics' warnings, one line each, in the
// library's terms ([Warning.String]).
func (d *Diagnostics) Warnings() []string {
	var out []string
	for _, w := range d.warnings {
		out = append(out, w.String())
	}
	return out
}

// Findings returns the diagnostics' warnings in their structured form,
// for a front end that names the hints' settings its own way.
func (d *Diagnostics) Findings() []Warning { return d.warnings }

// Diagnose reports evidence, penalty scale and coverage of p on the
// statistics' table. For a policy just solved from st, the backward pass
// has already counted decisions without evidence; otherwise p is
// evaluated on every row.
func Diagnose(st *Stats, p *Policy) *Diagnostics {
	return DiagnoseSampled(st, p, nil)
}

// DiagnoseSampled is [Diagnose] with p's evidence at the systematic sample
// of rows already computed: the second result of [ActAll] with stride
// [SampleStride]. A nil evidence is computed when needed.
func DiagnoseSampled(st *Stats, p *Policy, evidence []bool) *Diagnostics {
	t := st.Table
	dg := &Diagnostics{NoEvidenceBySite: map[string]float64{}, PenaltyShare: make([]float64, t.H)}
	K := len(t.Sites)
	noev := make([]float64, K)
	rows := make([]float64, K)
	fromPass := passEvidence(p, t.H, noev, dg.PenaltyShare)
	stride := st.tuning.stride(t.Rows)
	if fromPass || p.Method == Behaviour {
		evidence = nil
	} else if evidence == nil {
		// A combined policy (pevi-avg, pevi-min) or one read from a file:
		// evaluate it on a systematic sample of rows, in parallel.
		_, evidence, _ = ActAll(context.Background(), p, t, 0, stride)
	}
	sampled := make([]float64, K) // rows of each site in the sample
	row := 0
	for h := 1; h <= t.H; h++ {
		step := &t.Steps[h-1]
		for k := 0; k < K; k++ {
			if step.SiteStart[k] == step.SiteStart[k+1] {
				dg.EmptyCells = append(dg.EmptyCells, Cell{Site: t.Sites[k], Step: h})
			}
			if evidence == nil && step.Weight == nil {
				// Only the count is needed: it is exact, as the sum of
				// ones would be.
				rows[k] += float64(step.SiteStart[k+1] - step.SiteStart[k])
				continue
			}
			if evidence != nil {
				// Only the sampled rows count (rows becomes sampled
				// below): visit them alone, in the same order.
				lo, hi := row+int(step.SiteStart[k]), row+int(step.SiteStart[k+1])
				for g := (lo + stride - 1) / stride * stride; g < hi; g += stride {
					wt := 1.0
					if step.Weight != nil {
						wt = step.Weight[g-row]
					}
					sampled[k] += wt
					if !evidence[g/stride] {
						noev[k] += wt
					}
				}
				continue
			}
			for j := int(step.SiteStart[k]); j < int(step.SiteStart[k+1]); j++ {
				wt := 1.0
				if step.Weight != nil {
					wt = step.Weight[j]
				}
				rows[k] += wt
			}
		}
		row += step.Len()
	}
	if evidence != nil {
		rows = sampled
	}
	dg.finish(st, p, noev, rows)
	return dg
}

// passEvidence adds to noev[k] site k's weighted rows without evidence at
// every step and sets penaltyShare[h-1] to the mean penalty over the value
// range H-h+1, when p is one run whose backward pass counted them (a
// policy just solved by Algorithm 1 or pevi-pooled), and reports whether
// it did.
func passEvidence(p *Policy, H int, noev, penaltyShare []float64) bool {
	if len(p.Runs) != 1 || len(p.Runs[0].Steps) != H || p.Runs[0].Steps[0].NoEvidenceBySite == nil {
		return false
	}
	for h := 1; h <= H; h++ {
		c := &p.Runs[0].Steps[h-1]
		for k, x := range c.NoEvidenceBySite {
			noev[k] += x
		}
		if c.PenaltyTerms > 0 {
			penaltyShare[h-1] = c.Penalty / c.PenaltyTerms / float64(H-h+1)
		}
	}
	return true
}

// finish sets the shares from the weighted no-evidence and row counts per
// site, the coverage findings and the warnings.
func (dg *Diagnostics) finish(st *Stats, p *Policy, noev, rows []float64) {
	t := st.Table
	dg.finishFrom(t.Sites, &st.Map, t.A, t.H, Coverage(st), p, noev, rows)
}

// finishFrom is finish from the sites' sums: their names, the map, the
// coverage per site and the weighted no-evidence and row counts per site.
func (dg *Diagnostics) finishFrom(sites []string, m *features.Map, A, H int, coverage [][]float64, p *Policy, noev, rows []float64) {
	K := len(sites)
	total, totalNo := 0.0, 0.0
	for k := 0; k < K; k++ {
		total += rows[k]
		totalNo += noev[k]
		if rows[k] > 0 {
			dg.NoEvidenceBySite[sites[k]] = noev[k] / rows[k]
		}
	}
	if total > 0 {
		dg.NoEvidenceShare = totalNo / total
	}
	dg.Coverage = coverage
	d := m.Dim()
	for k := 0; k < K; k++ {
		u := Uncovered{Site: sites[k], Of: d}
		acts := map[int]bool{}
		for i, c := range dg.Coverage[k] {
			if c == 0 {
				u.Features++
				if a := m.ActionOf(i); a >= 0 {
					acts[a] = true
				}
			}
		}
		for a := 0; a < A; a++ {
			if acts[a] {
				u.Actions = append(u.Actions, a)
			}
		}
		if u.Features > 0 {
			dg.Uncovered = append(dg.Uncovered, u)
		}
	}
	dg.setCondition(p)
	dg.makeWarnings(p, H)
}

// Coverage counts, per site and feature, the rows (all steps, weighted)
// whose feature is nonzero. Sites are counted in parallel, once per Stats;
// the result is shared: do not modify it.
func Coverage(st *Stats) [][]float64 {
	st.coverOnce.Do(func() { st.cover = coverage(st) })
	return st.cover
}

func coverage(st *Stats) [][]float64 {
	if cov := coverageFromCells(st); cov != nil {
		return cov
	}
	return coverageRows(st)
}

// coverageFromCells returns coverage from the statistics when rows are
// unweighted: every term of coverage's sums is then 1, so the sums are
// integers, exact in any order, and equal the per-(site, step) counts of
// the action-block Gram (Stats.counts) summed over steps, or for tabular
// and indicator maps (one coordinate per block, phi_i = 1) the Grams'
// diagonals. Nil when neither applies.
func coverageFromCells(st *Stats) [][]float64 {
	t := st.Table
	m := &st.Map
	if !unweighted(t) || len(st.Cells) != len(t.Steps) {
		return nil
	}
	bl := &st.Layout.Blocks
	diagonal := (m.Kind == features.Tabular || m.Kind == features.Indicator) && bl.Diagonal()
	if st.counts == nil && !diagonal {
		return nil
	}
	K := len(t.Sites)
	out := make([][]float64, K)
	for k := range out {
		cov := make([]float64, m.Dim())
		for h := range t.Steps {
			if st.counts != nil {
				for i, c := range st.counts[h][k] {
					cov[i] += c
				}
				continue
			}
			packed := st.Cells[h][k].Packed
			for i := range cov {
				cov[i] += packed[st.Layout.Off[bl.Of[i]]]
			}
		}
		out[k] = cov
	}
	return out
}

// coverageRows computes coverage from the rows, under disclosure control:
// a feature withheld at a (site, step), and every feature of a silent
// one, counts no row there, so that a site's coverage is the sum of the
// counts it releases.
func coverageRows(st *Stats) [][]float64 {
	t := st.Table
	m := &st.Map
	K := len(t.Sites)
	out := make([][]float64, K)
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers.Or(0))
	for k := 0; k < K; k++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cov := make([]float64, m.Dim())
			idx := make([]int32, m.MaxNonzeros())
			val := make([]float64, m.MaxNonzeros())
			for h := 1; h <= t.H; h++ {
				step := &t.Steps[h-1]
				for j := int(step.SiteStart[k]); j < int(step.SiteStart[k+1]); j++ {
					wt := 1.0
					if step.Weight != nil {
						wt = step.Weight[j]
					}
					n := m.Phi(step.State[j*t.W:(j+1)*t.W], int(step.Action[j]), idx, val)
					if mask := st.maskAt(h, j); mask != nil {
						n = suppress(mask, idx, val, n)
					}
					for x := 0; x < n; x++ {
						cov[idx[x]] += wt
					}
				}
			}
			out[k] = cov
		}()
	}
	wg.Wait()
	return out
}

func (dg *Diagnostics) makeWarnings(p *Policy, H int) {
	if len(dg.EmptyCells) > 0 {
		var cells []string
		for i, c := range dg.EmptyCells {
			if i == 8 {
				cells = append(cells, fmt.Sprintf("and %d more", len(dg.EmptyCells)-8))
				break
			}
			cells = append(cells, fmt.Sprintf("site %s step %d", c.Site, c.Step))
		}
		dg.warnings = append(dg.warnings, Warning{Finding: fmt.Sprintf("%d (site, step) cells have no data (%s): those sites' regressions there are the ridge prior alone", len(dg.EmptyCells), strings.Join(cells, ", "))})
	}
	for _, u := range dg.Uncovered {
		acts := ""
		if len(u.Actions) > 0 {
			acts = fmt.Sprintf(" (features of actions %v)", u.Actions)
		}
		dg.warnings = append(dg.warnings, Warning{Finding: fmt.Sprintf("site %s never observes %d of %d features%s at any step: the row-min takes nu = 0 there; ", u.Site, u.Features, u.Of, acts), Hint: HintCluster})
	}
	if p.Method != Behaviour && dg.NoEvidenceShare > NoEvidenceWarn {
		dg.warnings = append(dg.warnings, Warning{Finding: fmt.Sprintf("%.1f%% of the data's decisions have no evidence (every action's Qhat is 0); they follow the %q fallback. ", 100*dg.NoEvidenceShare, p.Fallback), Hint: HintCheckPenalty})
	}
	var erased []string
	for h, s := range dg.PenaltyShare {
		if s >= 1 {
			erased = append(erased, fmt.Sprint(h+1))
		}
	}
	if len(erased) > 0 && p.penalty() == featurewise {
		dg.warnings = append(dg.warnings, Warning{Finding: fmt.Sprintf("the penalty (beta = %.4g) is at least the whole value range at steps %s: it erases every estimate there; ", p.Beta, strings.Join(erased, ",")), Hint: HintSmallerPenalty})
	}
	if w, ok := dg.conditionWarning(); ok {
		dg.warnings = append(dg.warnings, w)
	}
}
