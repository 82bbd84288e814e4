package eval

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
)

// Options configures evaluation from data.
type Options struct {
	// Bootstrap is the number of bootstrap replicates for the confidence
	// intervals (0: no intervals).
	Bootstrap int
	// Permutations is the number of permutations per cluster for the
	// Delta_h p-values (0: no p-values).
	Permutations int
	// Seed seeds the bootstrap and the permutations; replicate i uses a
	// stream derived from (Seed, i) alone.
	Seed uint64
	// Level is the confidence level of the intervals (default 0.95).
	Level float64
	// Workers bounds parallelism; results do not depend on it.
	Workers int
}

// SiteValue is one site's own value of the policy with its interval.
type SiteValue struct {
	Site   string  `json:"site"`
	Value  float64 `json:"value"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
}

// DeltaValue is Delta_{h,m} with its permutation p-value.
type DeltaValue struct {
	Step    int     `json:"step"`
	Cluster string  `json:"cluster"`
	Delta   float64 `json:"delta"`
	PValue  float64 `json:"p_value"`
}

// Report is the evidence behind a policy, from data alone.
type Report struct {
	PolicyValue float64 `json:"policy_value"`
	LowerBound  float64 `json:"lower_bound"`
	// ValueCI is the bootstrap interval of PolicyValue.
	ValueCILow  float64      `json:"value_ci_low"`
	ValueCIHigh float64      `json:"value_ci_high"`
	Beta        float64      `json:"beta"`
	Sites       []SiteValue  `json:"sites"`
	Delta       []DeltaValue `json:"delta"`
	// DeltaSum is sum_h Delta_h with Delta_h = max_m Delta_{h,m}.
	DeltaSum float64 `json:"delta_sum"`
	// Yardstick is 1/sqrt(N_min) - 1/sqrt(N_min^pool), the paper's scale
	// below which pooling pays.
	Yardstick  float64 `json:"yardstick"`
	Bootstrap  int     `json:"bootstrap"`
	Seed       uint64  `json:"seed"`
	Level      float64 `json:"level"`
	WorstSite  string  `json:"worst_site"`
	Clustering string  `json:"clustering,omitempty"`
}

// FromData evaluates p on the solver's data: robust fitted-Q value, its
// lower bound, each site's own value, and bootstrap intervals that
// resample trajectories within each site.
func FromData(ctx context.Context, sv *solve.Solver, p *solve.Policy, settings solve.Settings, opts Options) (*Report, error) {
	if opts.Level == 0 {
		opts.Level = 0.95
	}
	st := sv.Stats()
	t := st.Table
	beta := sv.SitewiseBeta()
	ev, err := sv.EvaluatePolicy(ctx, p, beta)
	if err != nil {
		return nil, err
	}
	rep := &Report{PolicyValue: ev.Value, LowerBound: ev.LowerBound, Beta: beta, Bootstrap: opts.Bootstrap, Seed: opts.Seed, Level: opts.Level,
		ValueCILow: math.NaN(), ValueCIHigh: math.NaN()}
	K := len(t.Sites)
	for k := 0; k < K; k++ {
		rep.Sites = append(rep.Sites, SiteValue{Site: t.Sites[k], Value: ev.Sites[k], CILow: math.NaN(), CIHigh: math.NaN()})
	}
	worst := 0
	for k := range rep.Sites {
		if rep.Sites[k].Value < rep.Sites[worst].Value {
			worst = k
		}
	}
	if K > 0 {
		rep.WorstSite = t.Sites[worst]
	}
	if opts.Bootstrap > 0 {
		reps := make([]*solve.Evaluation, opts.Bootstrap)
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(workers.Or(opts.Workers))
		inner := settings
		inner.Workers = 1
		for b := 0; b < opts.Bootstrap; b++ {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				bt := Resample(t, opts.Seed, uint64(b))
				bst, err := solve.NewStats(gctx, bt, st.Map, st.Layout.Blocks, 1)
				if err != nil {
					return err
				}
				bsv := solve.NewSolver(bst, inner)
				e, err := bsv.EvaluatePolicy(gctx, p, beta)
				if err != nil {
					return err
				}
				reps[b] = e
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		vals := make([]float64, len(reps))
		for i, e := range reps {
			vals[i] = e.Value
		}
		rep.ValueCILow, rep.ValueCIHigh = percentileCI(vals, opts.Level)
		for k := 0; k < K; k++ {
			for i, e := range reps {
				vals[i] = e.Sites[k]
			}
			rep.Sites[k].CILow, rep.Sites[k].CIHigh = percentileCI(vals, opts.Level)
		}
	}
	return rep, nil
}

// percentileCI returns the (1-level)/2 and (1+level)/2 quantiles of x
// (type 7, linear interpolation), ignoring NaN.
func percentileCI(x []float64, level float64) (lo, hi float64) {
	v := make([]float64, 0, len(x))
	for _, e := range x {
		if !math.IsNaN(e) {
			v = append(v, e)
		}
	}
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(v)
	return quantile(v, (1-level)/2), quantile(v, (1+level)/2)
}

func quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	pos := p * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i] + f*(sorted[i+1]-sorted[i])
}

// Resample returns a view of t in which each site's trajectories are drawn
// with replacement (as many as the site has), as row weights. The stream
// is derived from (seed, replicate) alone.
func Resample(t *parquetio.Table, seed, replicate uint64) *parquetio.Table {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^replicate))
	total := 0
	for _, n := range t.Trajectories {
		total += n
	}
	mult := make([]float64, total)
	off := 0
	for _, n := range t.Trajectories {
		for i := 0; i < n; i++ {
			mult[off+rng.IntN(n)]++
		}
		off += n
	}
	bt := *t
	bt.Steps = make([]parquetio.Step, len(t.Steps))
	for h := range t.Steps {
		s := t.Steps[h]
		w := make([]float64, s.Len())
		for j, o := range s.Traj {
			w[j] = mult[o]
			if s.Weight != nil {
				w[j] *= s.Weight[j]
			}
		}
		s.Weight = w
		bt.Steps[h] = s
	}
	return &bt
}
