package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// ErrBadModel marks a model file that cannot be read back.
var ErrBadModel = errors.New("sim: bad model file")

// ModelFormat is the format tag of model files.
const ModelFormat = "grmdp-sim-model/1"

// modelFile is the JSON form of a model: the resolved parameters for
// provenance and the drawn atoms, which alone define the model (reading a
// file never redraws anything).
type modelFile struct {
	Format   string `json:"format"`
	Scenario string `json:"scenario"`
	Features string `json:"features"`
	// Params are the parameters the model was drawn from, defaults filled
	// in (Sites, Trajectories, Horizon, Seed and the scenario's spec).
	Params Params   `json:"params"`
	Sites  []string `json:"sites"`

	Benchmark   *benchmarkFile   `json:"benchmark_model,omitempty"`
	Convergence *convergenceFile `json:"convergence_model,omitempty"`
	Trap        *trapFile        `json:"trap_model,omitempty"`
	Formulary   *formularyFile   `json:"formulary_model,omitempty"`
	Clinical    *clinicalFile    `json:"clinical_model,omitempty"`
}

type benchmarkFile struct {
	// Theta is [k][h-1][i]; Alpha and Beta are [k][h-1][i*p+j].
	Theta [][][]float64 `json:"theta"`
	Alpha [][][]float64 `json:"alpha"`
	Beta  [][][]float64 `json:"beta"`
	// EvalSeed seeds the common Monte Carlo draws of exact evaluation.
	EvalSeed uint64 `json:"eval_seed"`
}

type convergenceFile struct {
	// N1 and N2 are the first-step counts of b_1 and b_2 per site; P is
	// P_1^k(s1|s0,b_j) as [k][j-1] and Delta is delta^k (both follow from
	// N1 and N2, and are written for the reader's convenience).
	N1    []int       `json:"n1"`
	N2    []int       `json:"n2"`
	Delta []float64   `json:"delta"`
	P     [][]float64 `json:"p"`
}

type trapFile struct {
	// States are the grid states; Mu is mu^k_{h,j} as [k][h-1][j][state].
	States [][]float64     `json:"states"`
	Mu     [][][][]float64 `json:"mu"`
}

type formularyFile struct {
	// Per site k and index s*A+a: the next-state law (missing mass is
	// death), the mean reward and the behaviour probability; Initial is the
	// case-mix [k][s].
	Transitions [][]sparse  `json:"transitions"`
	Reward      [][]float64 `json:"reward"`
	Behaviour   [][]float64 `json:"behaviour"`
	Initial     [][]float64 `json:"initial"`
}

type clinicalFile struct {
	// Hospitals holds each hospital's drawn parameters (see Clinical).
	Hospitals []clinicalSite `json:"hospitals"`
}

func (c *common) envelope() *modelFile {
	return &modelFile{Format: ModelFormat, Scenario: c.scenario, Features: c.fmap.Kind.String(), Params: c.params, Sites: c.sites}
}

func (m *Benchmark) file() *modelFile {
	f := m.envelope()
	f.Benchmark = &benchmarkFile{Theta: m.theta, Alpha: m.alpha, Beta: m.beta, EvalSeed: m.evalSeed}
	return f
}

func (m *Hard) file() *modelFile {
	f := m.envelope()
	f.Convergence = &convergenceFile{N1: m.n1, N2: m.n2, Delta: m.Delta(), P: m.p}
	return f
}

func (m *Trap) file() *modelFile {
	f := m.envelope()
	f.Trap = &trapFile{States: m.grid, Mu: m.mu}
	return f
}

func (m *Formulary) file() *modelFile {
	f := m.envelope()
	f.Formulary = &formularyFile{Transitions: m.trans, Reward: m.reward, Behaviour: m.behaviour, Initial: m.initial}
	return f
}

func (m *Clinical) file() *modelFile {
	f := m.envelope()
	f.Clinical = &clinicalFile{Hospitals: m.hosp}
	return f
}

// WriteModel writes m as JSON: a "format" tag, the "scenario", the
// parameters it was drawn from and its atoms. The bytes depend only on the
// model (floats are written in the shortest form that reads back exactly).
func WriteModel(w io.Writer, m Model) error {
	b, err := json.Marshal(m.file())
	if err != nil {
		return fmt.Errorf("sim: encoding the model: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// ReadModelFile reads a model written by WriteModel from path.
func ReadModelFile(path string) (Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := ReadModel(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ReadModel reads a model written by WriteModel. The model evaluates
// exactly as the one written (the benchmark's Monte Carlo draws are
// seeded by the file).
func ReadModel(r io.Reader) (Model, error) {
	var f modelFile
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadModel, err)
	}
	if f.Format != ModelFormat {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrBadModel, f.Format, ModelFormat)
	}
	p := f.Params
	if p.Sites < 1 || len(p.Trajectories) != p.Sites || p.Horizon < 1 {
		return nil, fmt.Errorf("%w: params need sites >= 1, one trajectory count per site and horizon >= 1", ErrBadModel)
	}
	K := p.Sites
	var m Model
	var err error
	switch f.Scenario {
	case ScenarioBenchmark:
		if err := f.checkBenchmark(); err != nil {
			return nil, err
		}
		b := f.Benchmark
		m, err = newBenchmark(p, b.Theta, b.Alpha, b.Beta, b.EvalSeed)
	case ScenarioConvergence:
		c := f.Convergence
		if c == nil || p.Convergence == nil {
			return nil, f.bad("missing convergence_model or params.convergence")
		}
		if len(c.N1) != K || len(c.N2) != K || p.Convergence.Actions < 3 {
			return nil, f.bad("n1 and n2 need one count per site, and A >= 3")
		}
		m, err = newHard(p, c.N1, c.N2)
	case ScenarioTrap:
		if err := f.checkTrap(); err != nil {
			return nil, err
		}
		m, err = newTrap(p, f.Trap.States, f.Trap.Mu)
	case ScenarioFormulary:
		fo := f.Formulary
		if fo == nil || p.Formulary == nil {
			return nil, f.bad("missing formulary_model or params.formulary")
		}
		m, err = newFormulary(p, fo.Transitions, fo.Reward, fo.Behaviour, fo.Initial)
	case ScenarioClinical:
		c := f.Clinical
		if c == nil || p.Clinical == nil {
			return nil, f.bad("missing clinical_model or params.clinical")
		}
		m, err = newClinical(p, c.Hospitals)
	default:
		return nil, fmt.Errorf("%w: unknown scenario %q", ErrBadModel, f.Scenario)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadModel, err)
	}
	return m, nil
}

// bad returns the error of a model file whose scenario's tables are
// missing or malformed.
func (f *modelFile) bad(what string) error {
	return fmt.Errorf("%w: %s model: %s", ErrBadModel, f.Scenario, what)
}

// checkBenchmark checks the benchmark model's shapes and ranges.
func (f *modelFile) checkBenchmark() error {
	p, b := f.Params, f.Benchmark
	K, H := p.Sites, p.Horizon
	if b == nil || p.Benchmark == nil {
		return f.bad("missing benchmark_model or params.benchmark")
	}
	if err := p.Benchmark.check(); err != nil {
		return f.bad(err.Error())
	}
	d := p.Benchmark.P * p.Benchmark.Actions
	if !shape3(b.Theta, K, H, d) || !shape3(b.Alpha, K, H, d*p.Benchmark.P) || !shape3(b.Beta, K, H, d*p.Benchmark.P) {
		return f.bad("theta, alpha or beta has the wrong shape")
	}
	for _, th := range b.Theta {
		for _, v := range th {
			for _, y := range v {
				if !(y >= 0 && y <= 1) {
					return f.bad("theta must lie in [0,1]")
				}
			}
		}
	}
	for _, x := range [][][][]float64{b.Alpha, b.Beta} {
		for _, a := range x {
			for _, v := range a {
				for _, y := range v {
					if !(y > 0) {
						return f.bad("Beta shapes must be positive")
					}
				}
			}
		}
	}
	return nil
}

// checkTrap checks the trap model's states and that each row of mu is a
// probability distribution.
func (f *modelFile) checkTrap() error {
	p, t := f.Params, f.Trap
	K, H := p.Sites, p.Horizon
	if t == nil || p.Trap == nil {
		return f.bad("missing trap_model or params.trap")
	}
	S, P := len(t.States), p.Trap.P
	if S == 0 || P < 1 {
		return f.bad("no states")
	}
	for _, s := range t.States {
		if len(s) != P {
			return f.bad("states of the wrong width")
		}
	}
	if len(t.Mu) != K {
		return f.bad("mu is not per site")
	}
	for _, mk := range t.Mu {
		if !shape3(mk, H, P, S) {
			return f.bad("mu has the wrong shape")
		}
		for _, mh := range mk {
			for _, row := range mh {
				tot := 0.0
				for _, q := range row {
					if !(q >= 0) {
						return f.bad("mu has a negative entry")
					}
					tot += q
				}
				if math.Abs(tot-1) > 1e-9 {
					return f.bad("a row of mu does not sum to 1")
				}
			}
		}
	}
	return nil
}

func shape3(x [][][]float64, a, b, c int) bool {
	if len(x) != a {
		return false
	}
	for _, y := range x {
		if len(y) != b {
			return false
		}
		for _, z := range y {
			if len(z) != c {
				return false
			}
		}
	}
	return true
}
