package sim

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/grmdp/grmdp/traj"
)

// small returns each scenario at a size that keeps tests fast.
func small(t *testing.T, scenario string, seed uint64) Model {
	t.Helper()
	p := Params{Seed: seed}
	switch scenario {
	case ScenarioBenchmark:
		spec := DefaultBenchmarkSpec()
		spec.EvalSamples = 256
		p.Benchmark = &spec
		p.Trajectories = []int{60, 40, 100}
	case ScenarioConvergence:
		p.MinTrajectories = 50
	case ScenarioTrap:
		p.MinTrajectories = 40
	case ScenarioFormulary:
		p.Trajectories = []int{200, 80, 50, 150, 60}
	case ScenarioClinical:
		p.Trajectories = []int{100, 60, 80}
	}
	m, err := New(scenario, p)
	if err != nil {
		t.Fatalf("New(%s): %v", scenario, err)
	}
	return m
}

// hashPolicy is an arbitrary deterministic policy: a hash of (h, state).
func hashPolicy(A int, salt uint64) Policy {
	return func(h int, state []float64) int {
		x := deriveSeed(salt, uint64(h))
		for _, v := range state {
			x = mix(x ^ math.Float64bits(v))
		}
		return int(x % uint64(A))
	}
}

func TestNewUnknownScenario(t *testing.T) {
	if _, err := New("nope", Params{}); err == nil {
		t.Fatal("New(nope): got nil error")
	}
}

func TestResolveSizes(t *testing.T) {
	cases := []struct {
		name string
		p    Params
		want []int
		H    int
	}{
		{"defaults", Params{}, []int{1000, 1500, 2000, 3000}, 40},
		{"nmin", Params{MinTrajectories: 50}, []int{50, 75, 100, 150}, 40},
		{"more sites", Params{MinTrajectories: 100, Sites: 6}, []int{100, 150, 200, 300, 100, 150}, 40},
		{"explicit", Params{Trajectories: []int{7, 9}, Horizon: 5}, []int{7, 9}, 5},
	}
	for _, c := range cases {
		m, err := NewHard(c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := m.Trajectories(); !reflect.DeepEqual(got, c.want) || m.Horizon() != c.H || len(m.Sites()) != len(c.want) {
			t.Errorf("%s: got N = %v, H = %d, sites %v; want N = %v, H = %d", c.name, got, m.Horizon(), m.Sites(), c.want, c.H)
		}
	}
	for _, p := range []Params{{Sites: 2, Trajectories: []int{1, 2, 3}}, {Trajectories: []int{0}}, {Horizon: -1}} {
		if _, err := NewTrap(p); err == nil {
			t.Errorf("NewTrap(%+v): got nil error", p)
		}
	}
}

// linearScenarios are the scenarios whose models are linear in their
// feature maps and evaluate exactly (all but clinical).
func linearScenarios() []string {
	var out []string
	for _, sc := range Scenarios() {
		if sc != ScenarioClinical {
			out = append(out, sc)
		}
	}
	return out
}

// TestSampleTable checks the linear scenarios' tables; the clinical
// scenario's, which has NULLs, is checked by TestClinicalData.
func TestSampleTable(t *testing.T) {
	for _, sc := range linearScenarios() {
		m := small(t, sc, 3)
		tab, err := m.Sample(11)
		if err != nil {
			t.Fatalf("%s: Sample: %v", sc, err)
		}
		fm := m.Map()
		if tab.A != fm.A || tab.H != m.Horizon() || tab.W != fm.Width() || !reflect.DeepEqual(tab.Sites, m.Sites()) || !reflect.DeepEqual(tab.Trajectories, m.Trajectories()) {
			t.Errorf("%s: table A=%d H=%d W=%d sites %v N %v; model A=%d H=%d W=%d sites %v N %v", sc,
				tab.A, tab.H, tab.W, tab.Sites, tab.Trajectories, fm.A, m.Horizon(), fm.Width(), m.Sites(), m.Trajectories())
		}
		total := 0
		for _, n := range m.Trajectories() {
			total += n
		}
		if tab.Steps[0].Len() != total {
			t.Errorf("%s: %d rows at step 1, want %d", sc, tab.Steps[0].Len(), total)
		}
		if sc != ScenarioFormulary && tab.Rows != total*m.Horizon() {
			t.Errorf("%s: %d rows, want N*H = %d", sc, tab.Rows, total*m.Horizon())
		}
		for h := range tab.Steps {
			st := &tab.Steps[h]
			for j, r := range st.Reward {
				if r < 0 || r > 1 {
					t.Fatalf("%s: reward %g outside [0,1]", sc, r)
				}
				if err := fm.CheckSimplex(st.State[j*tab.W:(j+1)*tab.W], 1e-9); err != nil {
					t.Fatalf("%s: state %v: %v", sc, st.State[j*tab.W:(j+1)*tab.W], err)
				}
			}
		}
		// Same seed, same table; another seed, another table.
		again, _ := m.Sample(11)
		if !reflect.DeepEqual(tab, again) {
			t.Errorf("%s: Sample(11) twice differs", sc)
		}
		other, _ := m.Sample(12)
		if reflect.DeepEqual(tab, other) {
			t.Errorf("%s: Sample(11) and Sample(12) agree", sc)
		}
		// SampleRows feeds the same table through the Options.
		chunks, _ := m.SampleRows(11)
		if len(chunks) != len(m.Sites()) {
			t.Errorf("%s: %d chunks for %d sites", sc, len(chunks), len(m.Sites()))
		}
		b := traj.NewBuilder(m.Options())
		for _, c := range chunks {
			if err := b.Add(c); err != nil {
				t.Fatal(err)
			}
		}
		built, err := b.Build()
		if err != nil || !reflect.DeepEqual(built, tab) {
			t.Errorf("%s: building SampleRows differs from Sample (err %v)", sc, err)
		}
	}
}

func TestOptimalPolicyAttainsOptimalValue(t *testing.T) {
	for _, sc := range linearScenarios() {
		m := small(t, sc, 5)
		states := m.InitialStates(50, 1)
		vstar := m.OptimalValue(states)
		vpi := m.PolicyValue(m.OptimalPolicy(), states)
		for i := range states {
			if math.Abs(vstar[i]-vpi[i]) > 1e-9*max(1, vstar[i]) {
				t.Fatalf("%s: state %v: V* = %.12g but V^pi* = %.12g", sc, states[i], vstar[i], vpi[i])
			}
		}
		// No policy beats V* (exactly, also under the benchmark's common
		// random numbers), and values stay in [0, H].
		for salt := uint64(0); salt < 3; salt++ {
			v := m.PolicyValue(hashPolicy(m.Map().A, salt), states)
			for i := range states {
				if v[i] > vstar[i]+1e-12 || v[i] < -1e-12 || vstar[i] > float64(m.Horizon())+1e-12 {
					t.Fatalf("%s: state %v: V^pi = %g, V* = %g", sc, states[i], v[i], vstar[i])
				}
			}
		}
		// The optimal w-vectors and OptimalValue agree.
		w := m.OptimalWeights()
		fm := m.Map()
		if len(w) != m.Horizon() || len(w[0]) != fm.Dim() {
			t.Fatalf("%s: OptimalWeights has shape %d x %d", sc, len(w), len(w[0]))
		}
	}
}

func TestModelRoundTrip(t *testing.T) {
	for _, sc := range Scenarios() {
		m := small(t, sc, 9)
		var b1, b2, b3 bytes.Buffer
		if err := WriteModel(&b1, m); err != nil {
			t.Fatal(err)
		}
		if err := WriteModel(&b2, small(t, sc, 9)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Errorf("%s: two models from the same params write different bytes", sc)
		}
		if !bytes.Contains(b1.Bytes(), []byte(`"scenario":"`+sc+`"`)) {
			t.Errorf("%s: model file has no scenario field", sc)
		}
		back, err := ReadModel(bytes.NewReader(b1.Bytes()))
		if err != nil {
			t.Fatalf("%s: ReadModel: %v", sc, err)
		}
		if err := WriteModel(&b3, back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1.Bytes(), b3.Bytes()) {
			t.Errorf("%s: write, read, write changes the bytes", sc)
		}
		if !reflect.DeepEqual(back.Params(), m.Params()) || back.Scenario() != sc {
			t.Errorf("%s: params differ after the round trip", sc)
		}
		states := m.InitialStates(20, 4)
		if sc != ScenarioClinical && !reflect.DeepEqual(m.OptimalValue(states), back.OptimalValue(states)) {
			t.Errorf("%s: V* differs after the round trip", sc)
		}
		pi := hashPolicy(m.Map().A, 1)
		if !reflect.DeepEqual(m.PolicyValue(pi, states), back.PolicyValue(pi, states)) {
			t.Errorf("%s: V^pi differs after the round trip", sc)
		}
		t1, _ := m.Sample(2)
		t2, _ := back.Sample(2)
		if !reflect.DeepEqual(t1, t2) {
			t.Errorf("%s: Sample differs after the round trip", sc)
		}
	}
	for _, bad := range []string{`{}`, `{"format":"x"}`, `{"format":"` + ModelFormat + `","scenario":"trap","params":{"sites":1,"trajectories":[1],"horizon":1}}`, `not json`} {
		if _, err := ReadModel(bytes.NewReader([]byte(bad))); err == nil {
			t.Errorf("ReadModel(%s): got nil error", bad)
		}
	}
}

// checkCompressed checks the structure of a weighted table: the weights at
// step 1 sum to N_k, every row before step H points to a row of its site
// at the next step, and the weight arriving at each (site, state) equals
// the weight leaving it (no episode ends early in these models).
func checkCompressed(t *testing.T, tab *traj.Table, N []int) {
	t.Helper()
	W := tab.W
	key := func(st *traj.Step, j int) string {
		return string(rune(st.Site(j))) + fmtState(st.State[j*W:(j+1)*W])
	}
	for h := 1; h <= tab.H; h++ {
		st := &tab.Steps[h-1]
		if st.Weight == nil || len(st.Weight) != st.Len() {
			t.Fatalf("step %d: weights missing", h)
		}
		per := make([]float64, len(tab.Sites))
		for j, w := range st.Weight {
			if w < 1 || w != math.Trunc(w) {
				t.Fatalf("step %d row %d: weight %g", h, j, w)
			}
			if st.Reward[j] < 0 || st.Reward[j] > 1 {
				t.Fatalf("step %d row %d: mean reward %g", h, j, st.Reward[j])
			}
			per[st.Site(j)] += w
		}
		for k, n := range N {
			if per[k] != float64(n) {
				t.Fatalf("step %d site %d: weights sum to %g, want %d", h, k+1, per[k], n)
			}
		}
		if h == tab.H {
			for j, nx := range st.Next {
				if nx != -1 {
					t.Fatalf("step H row %d: Next = %d", j, nx)
				}
			}
			continue
		}
		nst := &tab.Steps[h]
		in := map[string]float64{}
		for j, nx := range st.Next {
			if nx < 0 || int(nx) >= nst.Len() || nst.Site(int(nx)) != st.Site(j) {
				t.Fatalf("step %d row %d: Next = %d is not a row of its site", h, j, nx)
			}
			in[key(nst, int(nx))] += st.Weight[j]
		}
		out := map[string]float64{}
		for j := 0; j < nst.Len(); j++ {
			out[key(nst, j)] += nst.Weight[j]
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("step %d: weight into states %v, out of them %v", h, in, out)
		}
	}
}

func fmtState(s []float64) string {
	b := make([]byte, 0, 8*len(s))
	for _, v := range s {
		x := math.Float64bits(v)
		for i := 0; i < 8; i++ {
			b = append(b, byte(x>>(8*i)))
		}
	}
	return string(b)
}
