package experiment

import (
	"math"
	"slices"
)

// Summary is everything an experiment produced: summary.json is its JSON
// encoding, and table.md, table.csv and the plots are drawn from it
// alone.
type Summary struct {
	Experiment string `json:"experiment"`
	// Paper names the section and figure reproduced.
	Paper string `json:"paper"`
	// Command is the command line that reproduces the run (the number of
	// workers and the output directory do not change results and are left
	// out).
	Command  string   `json:"command"`
	Reps     int      `json:"reps"`
	Seed     uint64   `json:"seed"`
	Settings Settings `json:"settings"`
	// Methods (benchmark): each method's mean suboptimality over the
	// trials, its 95% t-interval and the trials' values.
	Methods []MethodResult `json:"methods,omitempty"`
	// Fits (convergence, pessimism): OLS of log(mean) on log(N_min) over
	// the grid points with a positive mean.
	Fits []Fit `json:"fits,omitempty"`
	// RangeFits (pessimism): the same fits on the first len(NMin)-1 points
	// only, the range the paper used for c = 1e-3.
	RangeFits []Fit `json:"range_fits,omitempty"`
	// Points (convergence, pessimism): per grid point (and c), the mean of
	// each metric over the trials with its interval and the trials'
	// values.
	Points []Point `json:"points,omitempty"`
	// Coverage (coverage study): per policy and quantity, how often the
	// evaluation's intervals contain the exact value and how its misses
	// were flagged; Cells every evaluated value behind it.
	Coverage []CoverageResult `json:"coverage,omitempty"`
	Cells    []CoverageCell   `json:"cells,omitempty"`
	// Seeds lists the seeds every trial used.
	Seeds []TrialSeeds `json:"seeds"`
	// Notes say in words what a reader must know to read the numbers.
	Notes []string `json:"notes"`
}

// Settings records the experiment's settings.
type Settings struct {
	Scenario string `json:"scenario"`
	Features string `json:"features"`
	Sites    int    `json:"sites"`
	Actions  int    `json:"actions"`
	Horizon  int    `json:"horizon"`
	D        int    `json:"d"`
	// Trajectories is N_k per site (benchmark); SiteRatio the site sizes
	// that NMin scales (convergence, pessimism: N_k = N_min ratio_k /
	// min ratio).
	Trajectories []int    `json:"trajectories,omitempty"`
	SiteRatio    []int    `json:"site_ratio,omitempty"`
	NMin         []int    `json:"n_min,omitempty"`
	Methods      []string `json:"methods"`
	Lambda       Number   `json:"lambda"`
	Xi           Number   `json:"xi"`
	C            []Number `json:"c"`
	// Fallback is the rule for decisions without evidence: "lowest", the
	// paper's.
	Fallback string `json:"fallback"`
	// EvalStates is the number of initial states a trial averages over
	// (convergence: s0 only).
	EvalStates int `json:"eval_states"`
	// Model says whether each trial draws its own model.
	Model string `json:"model"`
	// Sampler is "trajectories" or "compressed" (counts; see sim.Compressor).
	Sampler     string  `json:"sampler"`
	TrapCount   int     `json:"trap_count,omitempty"`
	RewardScale Number  `json:"reward_scale,omitempty"`
	BetaNMin    int     `json:"beta_n_min,omitempty"`
	Spec        any     `json:"spec"`
	Level       float64 `json:"confidence_level"`
	// Bootstrap is the number of bootstrap replicates per evaluation
	// (coverage study).
	Bootstrap int `json:"bootstrap,omitempty"`
}

// Estimate is the mean of one metric over the trials.
type Estimate struct {
	Mean   Number `json:"mean"`
	CILow  Number `json:"ci_low"`
	CIHigh Number `json:"ci_high"`
	SD     Number `json:"sd"`
	Median Number `json:"median"`
	// Zeros counts the trials whose value is exactly 0 (the learned
	// policy is optimal at every evaluation state).
	Zeros  int      `json:"zeros"`
	Values []Number `json:"values"`
}

func estimate(x []float64) Estimate {
	iv := MeanCI(x, Level)
	z := 0
	for _, v := range x {
		if v == 0 {
			z++
		}
	}
	return Estimate{Mean: Number(iv.Mean), CILow: Number(iv.Low), CIHigh: Number(iv.High), SD: Number(iv.SD), Median: Number(iv.Median), Zeros: z, Values: numbers(x)}
}

// MethodResult is one method's suboptimality in the benchmark.
type MethodResult struct {
	Method string `json:"method"`
	Estimate
}

// Point is one grid point of the convergence or pessimism experiment.
type Point struct {
	C             Number    `json:"c"`
	NMin          int       `json:"n_min"`
	Trajectories  []int     `json:"trajectories"`
	Suboptimality Estimate  `json:"suboptimality"`
	ValueGap      *Estimate `json:"value_gap,omitempty"`
}

// Fit is a log-log regression of a metric's mean on N_min.
type Fit struct {
	Metric string `json:"metric"`
	C      Number `json:"c"`
	Slope  Number `json:"slope"`
	// CILow and CIHigh bound the slope's 95% t-interval (n-2 degrees of
	// freedom); null with fewer than three points.
	CILow     Number `json:"ci_low"`
	CIHigh    Number `json:"ci_high"`
	R2        Number `json:"r2"`
	Intercept Number `json:"intercept"`
	SE        Number `json:"se"`
	// NMin lists the points fitted; Skipped the points left out.
	NMin    []int  `json:"n_min"`
	Skipped []int  `json:"skipped_n_min"`
	Range   string `json:"range"`
	Note    string `json:"note,omitempty"`
	// Paper holds the paper's reported fit, when it reports one.
	Paper *PaperFit `json:"paper,omitempty"`
}

// PaperFit is a slope the paper reports: slope ± half-width (95%).
type PaperFit struct {
	Slope     float64  `json:"slope"`
	HalfWidth float64  `json:"half_width"`
	R2        *float64 `json:"r2,omitempty"`
	Range     string   `json:"range"`
}

// TrialSeeds are the seeds of one trial: its model, its data (one per
// grid point) and its evaluation states.
type TrialSeeds struct {
	Rep   int      `json:"rep"`
	Model uint64   `json:"model"`
	Data  []uint64 `json:"data"`
	Eval  uint64   `json:"eval"`
}

// fitPoints fits log(y) on log(N_min) for the points idx (indices into
// nmin and y), skipping points whose mean is not positive.
func fitPoints(metric string, c float64, nmin []int, y []float64, idx []int, rangeName string) Fit {
	var xs, ys []float64
	var ns []int
	for _, i := range idx {
		xs = append(xs, float64(nmin[i]))
		ys = append(ys, y[i])
		ns = append(ns, nmin[i])
	}
	l, skipped := LogLog(xs, ys, Level)
	f := Fit{Metric: metric, C: Number(c), Slope: Number(l.Slope), CILow: Number(l.Low), CIHigh: Number(l.High),
		R2: Number(l.R2), Intercept: Number(l.Intercept), SE: Number(l.SE), Range: rangeName, NMin: []int{}, Skipped: []int{}}
	for i, n := range ns {
		if slices.Contains(skipped, i) {
			f.Skipped = append(f.Skipped, n)
			continue
		}
		f.NMin = append(f.NMin, n)
	}
	if len(f.Skipped) > 0 {
		f.Note = "points with a mean of exactly 0 cannot be drawn on a log scale and are left out of the fit: N_min = " + joinInts(f.Skipped)
	}
	if len(f.NMin) < 3 {
		f.Note = joinNotes(f.Note, "fewer than three points: no interval for the slope")
	}
	return f
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func paperR2(v float64) *float64 { return &v }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
