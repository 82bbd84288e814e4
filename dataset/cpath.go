package dataset

import (
	"context"
	"math"

	"github.com/grmdp/grmdp/eval/report"
	"github.com/grmdp/grmdp/solve"
)

// PathPoint is a policy solved at one penalty constant C: its beta, its
// share of decisions without evidence, its value estimate, its robust
// value and lower bound by fitted-Q evaluation, and its agreement with
// the behaviour policy at a systematic sample of rows
// (solve.SampleStride).
type PathPoint struct {
	C, Beta, NoEvidence, ValueEstimate, RobustValue, PessimisticValue, Agreement float64
}

// CPath is a penalty path: a [PathPoint] per penalty constant.
type CPath []PathPoint

// PenaltyPath solves prob at each penalty constant of cs (base's other
// settings, beta from c), reusing r's statistics and factorisations. It
// needs the solver of data held in memory (r.Solver not nil).
func (r *Solved) PenaltyPath(ctx context.Context, base solve.Settings, prob solve.Problem, cs []float64) (CPath, error) {
	if r.Solver == nil {
		return nil, &InMemoryError{Need: "a penalty path"}
	}
	sv := r.Solver
	st := sv.Stats()
	t := st.Table
	beh, err := sv.Solve(ctx, solve.Problem{Method: solve.Behaviour})
	if err != nil {
		return nil, err
	}
	ba, _, err := solve.ActAll(ctx, beh, t, base.Workers, solve.SampleStride(t))
	if err != nil {
		return nil, err
	}
	var pts CPath
	for _, c := range cs {
		s := base
		s.C, s.BetaSet = c, false
		csv := sv.WithPenalty(s)
		p, err := csv.Solve(ctx, prob)
		if err != nil {
			return nil, err
		}
		dg := solve.Diagnose(st, p)
		ev, err := csv.EvaluatePolicy(ctx, p, p.Beta)
		if err != nil {
			return nil, err
		}
		pa, _, err := solve.ActAll(ctx, p, t, base.Workers, solve.SampleStride(t))
		if err != nil {
			return nil, err
		}
		agree := 0.0
		for j := range pa {
			if pa[j] == ba[j] {
				agree++
			}
		}
		n := float64(len(pa))
		pts = append(pts, PathPoint{C: c, Beta: p.Beta, NoEvidence: dg.NoEvidenceShare, ValueEstimate: p.ValueEstimate,
			RobustValue: ev.Value, PessimisticValue: ev.LowerBound, Agreement: agree / max(n, 1)})
	}
	return pts, nil
}

// WriteFiles writes the path beside the policy p solved at base: the
// table prefix+".cpath.csv" and the plots prefix+".cpath.png" and ".svg"
// (report.WriteCPath). The plots mark p's c, unless base gave beta
// directly, and with a cross-fitted choice they show the held-out scores
// it was made by.
func (pts CPath) WriteFiles(prefix string, base solve.Settings, p *solve.Policy) error {
	rp := make([]report.CPathPoint, len(pts))
	for i, pt := range pts {
		rp[i] = report.CPathPoint(pt)
	}
	chosen := base.C
	if base.BetaSet {
		chosen = math.NaN()
	}
	return report.WriteCPath(prefix, rp, chosen, p.H, p.Selection)
}
