package experiment

import (
	"context"
	"testing"
	"time"

	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

func TestProtoBench(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	m, err := sim.New("benchmark", sim.Params{Seed: 7})
	if err != nil { t.Fatal(err) }
	tab, err := m.Sample(8)
	if err != nil { t.Fatal(err) }
	t.Logf("sample %v", time.Since(t0)); t0 = time.Now()
	fm := m.Map()
	st, err := solve.NewStats(ctx, tab, fm, fm.Blocks(), 1)
	if err != nil { t.Fatal(err) }
	t.Logf("stats %v", time.Since(t0)); t0 = time.Now()
	states := m.InitialStates(200, 9)
	vstar := m.OptimalValue(states)
	t.Logf("vstar %v", time.Since(t0)); t0 = time.Now()
	s := solve.DefaultSettings
	s.Fallback = solve.FallbackLowest
	s.Workers = 1
	sv := solve.NewSolver(st, s)
	for _, meth := range []solve.Method{solve.Sitewise, solve.PEVIPooled, solve.PEVIAvg, solve.PEVIMin} {
		p, err := sv.Solve(ctx, solve.Problem{Method: meth})
		if err != nil { t.Fatal(err) }
		t.Logf("solve %s %v", meth, time.Since(t0)); t0 = time.Now()
		pi := func(h int, state []float64) int {
			q := make([]float64, p.A)
			a, _, _ := p.Act(h, state, q)
			return a
		}
		v := m.PolicyValue(pi, states)
		so := 0.0
		for i := range v { so += vstar[i] - v[i] }
		t.Logf("eval %s %v subopt %.4f", meth, time.Since(t0), so/200); t0 = time.Now()
	}
}
