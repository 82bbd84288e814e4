package sim

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

func newClinicalT(t *testing.T, p Params) *Clinical {
	t.Helper()
	m, err := NewClinical(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// episodes calls f with the row range [i, j) of each episode of c.
func episodes(c *traj.Chunk, f func(i, j int)) {
	for i := 0; i < c.Len(); {
		j := i + 1
		for j < c.Len() && c.TrajInt[j] == c.TrajInt[i] {
			j++
		}
		f(i, j)
		i = j
	}
}

// within fails unless |got - want| <= tol.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s: got %.5f, want %.5f within %.5f", what, got, want, tol)
	}
}

// TestClinicalData checks the generator's invariants on a data set of
// 2000 patients per hospital.
func TestClinicalData(t *testing.T) {
	m := newClinicalT(t, Params{Seed: 1, Trajectories: []int{2000, 2000, 2000, 2000, 2000}})
	chunks, err := m.SampleRows(3)
	if err != nil {
		t.Fatal(err)
	}
	H := m.Horizon()
	rows, nulls := 0, 0
	firstLac := make([]float64, m.K)
	for k, c := range chunks {
		deaths, discharges, full := 0, 0, 0
		n := 0
		episodes(c, func(i, j int) {
			n++
			for r := i; r < j; r++ {
				if c.Step[r] != int64(r-i+1) {
					t.Fatalf("site %d: episode %d has step %d at its row %d", k+1, c.TrajInt[i], c.Step[r], r-i+1)
				}
				if a := int(c.ActionInt[r]); !m.Formulary(k, a) {
					t.Fatalf("site %d: treatment %d is off its formulary", k+1, a)
				}
				rw := c.Reward[r]
				if r < j-1 && rw != 0 || rw != 0 && rw != 1 {
					t.Fatalf("site %d: reward %g at step %d of an episode of %d rows", k+1, rw, c.Step[r], j-i)
				}
				lac, sofa := c.State[2*r], c.State[2*r+1]
				if c.Missing[r] != math.IsNaN(lac) {
					t.Fatalf("site %d row %d: Missing %v with lactate %g", k+1, r, c.Missing[r], lac)
				}
				if c.Missing[r] {
					nulls++
				} else if lac < 0.3 || lac > 40 || lac != math.Round(10*lac)/10 {
					t.Fatalf("site %d: lactate %g", k+1, lac)
				}
				if sofa < 0 || sofa > 24 || sofa != math.Trunc(sofa) {
					t.Fatalf("site %d: SOFA %g", k+1, sofa)
				}
			}
			if j-i > H {
				t.Fatalf("site %d: episode of %d rows, H = %d", k+1, j-i, H)
			}
			switch {
			case j-i == H:
				full++
			case c.Reward[j-1] == 0:
				deaths++
			default:
				discharges++
			}
			if !math.IsNaN(c.State[2*i]) {
				firstLac[k] += math.Log(c.State[2*i]) / float64(m.N[k])
			}
		})
		rows += c.Len()
		if n != m.N[k] {
			t.Errorf("site %d: %d episodes, want %d", k+1, n, m.N[k])
		}
		if deaths < n/20 || discharges < n/20 || full < n/20 {
			t.Errorf("site %d: %d early deaths, %d early discharges, %d full episodes of %d", k+1, deaths, discharges, full, n)
		}
	}
	// NULLs at the rate set (4 standard errors).
	p := m.spec.NullRate
	within(t, "NULL rate", float64(nulls)/float64(rows), p, 4*math.Sqrt(p*(1-p)/float64(rows)))
	// Hospitals differ in case-mix: the mean first log-lactate spreads far
	// beyond its noise (sd about 0.4 / sqrt(2000)).
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range firstLac {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi-lo < 0.1 {
		t.Errorf("mean first log-lactate per site %v: spread %.3f, want at least 0.1", firstLac, hi-lo)
	}
	// Hospitals 2 and 4 keep treatments off their formulary.
	for k, off := range [][]int{{}, {3}, {}, {2, 3}, {}} {
		for a := range m.A {
			on := true
			for _, b := range off {
				on = on && a != b
			}
			if m.Formulary(k, a) != on {
				t.Errorf("site %d: Formulary(%d) = %v", k+1, a, !on)
			}
		}
	}
	// The same seed draws the same rows, bit for bit.
	again, _ := m.SampleRows(3)
	for k := range chunks {
		if fmtState(chunks[k].State) != fmtState(again[k].State) || fmtState(chunks[k].Reward) != fmtState(again[k].Reward) {
			t.Errorf("site %d: SampleRows(3) twice differs", k+1)
		}
	}
	other, _ := m.SampleRows(4)
	if fmtState(chunks[0].State) == fmtState(other[0].State) {
		t.Error("SampleRows(3) and SampleRows(4) agree")
	}
}

// TestClinicalSample checks that Sample is the data read with --nulls
// truncate: every episode cut before its first NULL.
func TestClinicalSample(t *testing.T) {
	m := newClinicalT(t, Params{Seed: 2, Trajectories: []int{300, 200}})
	tab, err := m.Sample(5)
	if err != nil {
		t.Fatal(err)
	}
	chunks, _ := m.SampleRows(5)
	kept := 0
	var removed []traj.NullCount
	for k, c := range chunks {
		nc := traj.NullCount{Site: m.Sites()[k]}
		episodes(c, func(i, j int) {
			cut := j
			for r := i; r < j; r++ {
				if c.Missing[r] {
					cut = r
					break
				}
			}
			kept += cut - i
			if cut < j {
				nc.Rows += j - cut
				nc.Episodes++
				if cut > i {
					nc.Truncated++
				}
			}
		})
		removed = append(removed, nc)
	}
	if tab.Rows != kept {
		t.Errorf("Sample has %d rows, want the %d before each episode's first NULL", tab.Rows, kept)
	}
	for k, nc := range removed {
		if k >= len(tab.Nulls) || tab.Nulls[k] != nc {
			t.Errorf("Nulls = %+v, want %+v", tab.Nulls, removed)
			break
		}
	}
	if tab.W != 2 || tab.H != m.Horizon() || tab.A != m.A {
		t.Errorf("table W = %d, H = %d, A = %d", tab.W, tab.H, tab.A)
	}
}

func TestClinicalBehaviour(t *testing.T) {
	m := newClinicalT(t, Params{Seed: 1})
	prob := make([]float64, m.A)
	for k := range m.K {
		n := 0
		for a := range m.A {
			if m.Formulary(k, a) {
				n++
			}
		}
		for _, lac := range []float64{0.3, 1, 2.5, 6, 20} {
			for _, sofa := range []float64{0, 4, 10, 24} {
				m.Behaviour(prob, k, lac, sofa)
				tot := 0.0
				for a, q := range prob {
					tot += q
					if m.Formulary(k, a) && q < m.spec.Exploration/float64(n) || !m.Formulary(k, a) && q != 0 {
						t.Fatalf("site %d, vitals (%g, %g): propensity %g of %d (on formulary: %v)", k+1, lac, sofa, q, a, m.Formulary(k, a))
					}
				}
				within(t, "propensities' sum", tot, 1, 1e-12)
			}
		}
	}
}

// TestClinicalHorizonOne checks Monte Carlo and the grid against a
// closed form: with H = 1 and standard care (no effect), x' is normal
// with mean mu_k + drift and variance 0.7^2 + 0.35^2, and the value is the
// integral of (1 - death)(discharge + (1 - discharge) survival) against
// it, computed here by the midpoint rule.
func TestClinicalHorizonOne(t *testing.T) {
	m := newClinicalT(t, Params{Seed: 4, Horizon: 1})
	mc := m.Value(func(int, int, []float64) int { return 0 }, 40000, 1)
	grid := m.LatentValue(func(int, int, float64, bool) int { return 0 })
	for k := range m.K {
		mu := m.hosp[k].SeverityMean + clinicalDrift
		sd := math.Hypot(clinicalInitialSD, clinicalNoise)
		want, dx := 0.0, 1e-3
		for x := mu - 10*sd; x < mu+10*sd; x += dx {
			y := x + dx/2
			d, c := m.death(k, y), discharge(y)
			want += (1 - d) * (c + (1-c)*survival(y)) * math.Exp(-sq((y-mu)/sd)/2) / (sd * math.Sqrt(2*math.Pi)) * dx
		}
		within(t, "grid value, H = 1", grid[k], want, 1e-4)
		within(t, "Monte Carlo value, H = 1", mc[k].Value, want, 4*mc[k].StdErr)
	}
}

// TestClinicalValueMatchesGrid compares Monte Carlo with the grid's
// dynamic programming for treatments given always, at H = 12.
func TestClinicalValueMatchesGrid(t *testing.T) {
	m := newClinicalT(t, Params{Seed: 1})
	for _, a := range []int{1, 3} {
		mc := m.Value(func(int, int, []float64) int { return a }, 20000, 7)
		grid := m.LatentValue(func(int, int, float64, bool) int { return a })
		for k := range m.K {
			within(t, "always "+ClinicalTreatments[a], mc[k].Value, grid[k], 4*mc[k].StdErr)
		}
	}
}

// TestClinicalBehaviourMatchesData compares the Monte Carlo value of the
// observed care with the mean outcome of the uncensored episodes of
// simulated data (NULLs strike at random, so those are a random subset).
func TestClinicalBehaviourMatchesData(t *testing.T) {
	m := newClinicalT(t, Params{Seed: 3, Trajectories: []int{8000, 8000, 8000, 8000, 8000}})
	chunks, _ := m.SampleRows(9)
	v := m.BehaviourValue(20000, 2)
	oracle := m.LatentValue(nil)
	for k, c := range chunks {
		n, sum := 0, 0.0
		episodes(c, func(i, j int) {
			for r := i; r < j; r++ {
				if c.Missing[r] {
					return
				}
			}
			n++
			sum += c.Reward[j-1]
		})
		mean := sum / float64(n)
		se := math.Hypot(math.Sqrt(mean*(1-mean)/float64(n)), v[k].StdErr)
		within(t, "observed care against the data", v[k].Value, mean, 4*se)
		if v[k].Value > oracle[k]+4*v[k].StdErr {
			t.Errorf("site %d: observed care %.4f above the best latent policy's %.4f", k+1, v[k].Value, oracle[k])
		}
	}
}

// TestClinicalSitePolicyValue checks the Model methods' Monte Carlo (the
// severity drawn from its posterior given the first vitals) against Value:
// averaged over SiteInitialLaw, SitePolicyValue is the site's value.
func TestClinicalSitePolicyValue(t *testing.T) {
	m := newClinicalT(t, Params{Seed: 1})
	rule := func(h int, v []float64) int {
		switch {
		case v[0] > 4 && v[1] > 10:
			return 3
		case v[0] > 1.5:
			return 1
		}
		return 0
	}
	mc := m.Value(func(k, h int, v []float64) int { return rule(h, v) }, 20000, 3)
	for _, k := range []int{0, 3} {
		states, probs := m.SiteInitialLaw(k)
		got := 0.0
		for i, v := range m.SitePolicyValue(k, rule, states) {
			got += probs[i] * v
		}
		// SitePolicyValue averages 16 episodes over 1000 states.
		se := math.Hypot(math.Sqrt(got*(1-got)/(clinicalLaw*clinicalPerState)), mc[k].StdErr)
		within(t, "SitePolicyValue over the site's law", got, mc[k].Value, 4*se)
	}
	if v := m.OptimalValue([][]float64{{1, 2}}); !math.IsNaN(v[0]) {
		t.Errorf("OptimalValue = %g, want NaN", v[0])
	}
}

// TestClinicalValueDeterministic checks that Value depends on its seed
// only, not on GOMAXPROCS, and that common random numbers make a policy's
// value equal across calls.
func TestClinicalValueDeterministic(t *testing.T) {
	m := newClinicalT(t, Params{Seed: 1, Trajectories: []int{10, 10}})
	pi := func(k, h int, v []float64) int { return int(v[1]) % 4 }
	a := m.Value(pi, 3000, 5)
	prev := runtime.GOMAXPROCS(1)
	b := m.Value(pi, 3000, 5)
	runtime.GOMAXPROCS(prev)
	for k := range a {
		if a[k] != b[k] {
			t.Errorf("site %d: %+v with GOMAXPROCS %d, %+v with 1", k+1, a[k], prev, b[k])
		}
	}
	if c := m.Value(pi, 3000, 6); c[0] == a[0] {
		t.Errorf("seeds 5 and 6 give the same value %+v", c[0])
	}
}

func TestClinicalBadParams(t *testing.T) {
	bad := []ClinicalSpec{
		func() ClinicalSpec { s := DefaultClinicalSpec(); s.OffFormulary = [][]int{{0}}; return s }(),
		func() ClinicalSpec { s := DefaultClinicalSpec(); s.OffFormulary = [][]int{{4}}; return s }(),
		func() ClinicalSpec { s := DefaultClinicalSpec(); s.NullRate = 1; return s }(),
		func() ClinicalSpec { s := DefaultClinicalSpec(); s.Exploration = 0; return s }(),
		func() ClinicalSpec { s := DefaultClinicalSpec(); s.OffFormulary = nil; return s }(),
	}
	for i, s := range bad {
		if _, err := NewClinical(Params{Clinical: &s}); err == nil {
			t.Errorf("case %d (%+v): got nil error", i, s)
		}
	}
}

// TestClinicalParquet writes SampleRows' chunks with NULLs (as simulate
// does) and reads the file with the model's Options: the table is
// Sample's.
func TestClinicalParquet(t *testing.T) {
	m := newClinicalT(t, Params{Seed: 2, Trajectories: []int{300, 200, 250}})
	chunks, _ := m.SampleRows(5)
	path := filepath.Join(t.TempDir(), "d.parquet")
	opts := m.Options()
	if err := parquetio.WriteChunks(path, chunks, parquetio.WriteOptions{StateColumns: opts.State.Columns, NullNaN: true}); err != nil {
		t.Fatal(err)
	}
	got, err := parquetio.Read(context.Background(), []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := m.Sample(5)
	got.Sources, want.Sources = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the file read with --nulls truncate differs from Sample: %d rows, nulls %+v; want %d rows, nulls %+v", got.Rows, got.Nulls, want.Rows, want.Nulls)
	}
	opts.Nulls = traj.NullsError
	if _, err := parquetio.Read(context.Background(), []string{path}, opts); err == nil {
		t.Error("reading the NULLs without a null policy: got nil error")
	}
}
