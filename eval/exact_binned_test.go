package eval

import (
	"errors"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// A binned policy over the model's state column acts on the model's
// states through its own map: on the hard instance (indicator map over
// "state", every evaluation state s0) a binned policy whose only positive
// coefficient is action a's in s0's cell has the closed-form
// suboptimality (H-1) [min_k p_1^k - min_k p_{a+1}^k]. A binned policy
// over another column is still refused.
func TestExactBinnedPolicyOnModelStates(t *testing.T) {
	const H = 5
	hm := hardModel(t, H)
	me := NewModel(hm)
	p := hm.P()
	A := hm.Map().A
	binned := func(col string, a int) *solve.Policy {
		m := features.Map{Kind: features.Binned, A: A, StateColumns: []string{col}, Bins: []features.Bins{{Column: col, Cuts: []float64{0.5}}}}
		idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
		if n := m.Phi([]float64{0}, a, idx, val); n != 1 {
			t.Fatalf("binned phi has %d nonzeros, want 1", n)
		}
		steps := make([]solve.StepCoef, H)
		for h := range steps {
			steps[h] = solve.StepCoef{W: make([]float64, m.Dim()), M: make([]float64, m.Dim())}
			steps[h].W[idx[0]] = 1
		}
		return &solve.Policy{Method: solve.Sitewise, Map: m, H: H, D: m.Dim(), A: A, Fallback: solve.FallbackLowest,
			Runs: []solve.PolicyRun{{Group: "all", Steps: steps}}}
	}
	for _, a := range []int{0, 1, 2} {
		got, err := me.Exact(binned("state", a))
		if err != nil {
			t.Fatalf("action %d: %v", a, err)
		}
		want := float64(H-1) * (minCol(p, 0) - minCol(p, a))
		if !near(got.Suboptimality, want, 1e-12) {
			t.Errorf("binned policy choosing action %d at s0: Suboptimality %.15g, closed form %.15g", a, got.Suboptimality, want)
		}
	}
	if _, err := me.Exact(binned("lactate", 1)); !errors.Is(err, solve.ErrBadPolicy) {
		t.Errorf("a binned policy over another column: got error %v, want ErrBadPolicy", err)
	}
}
