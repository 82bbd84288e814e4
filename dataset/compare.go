package dataset

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/solve"
)

// MethodRow is one method's line in a comparison of every method on the
// same data (compare.json's methods).
type MethodRow struct {
	Method          string   `json:"method"`
	Groups          int      `json:"groups"`
	Beta            float64  `json:"beta"`
	ValueEstimate   *float64 `json:"value_estimate"`
	NoEvidenceShare *float64 `json:"no_evidence_share"`
	Disagreement    float64  `json:"disagreement_with_sitewise"`
	Policy          string   `json:"policy"`
	OptimalValue    *float64 `json:"optimal_value,omitempty"`
	PolicyValue     *float64 `json:"policy_value,omitempty"`
	Suboptimality   *float64 `json:"suboptimality,omitempty"`
	ValueGap        *float64 `json:"value_gap,omitempty"`
	// Evaluation is the policy's evaluation by eval's estimator on the
	// compared data, comparable across methods (null when the data are not
	// held in memory or the evaluation is skipped).
	Evaluation *eval.Report `json:"evaluation"`
	// HeldOut is the method's held-out record ([Data.HeldOutMethods]),
	// null unless the comparison scored the methods held out.
	HeldOut *MethodHeldOut `json:"heldout"`
}

// Rows makes each method's row, its policy at dir/METHOD.parquet, and
// adds the warnings (the shared ones, then the method's diagnostics') to
// its policy; exact, when not nil, gives a policy's exact values under a
// known model; warn, when not nil, words a method's diagnostics as
// warnings (default: [solve.Diagnostics.Warnings]). It returns the
// methods' warnings, each once, naming the methods it applies to
// ("sitewise, pooled: w").
func (res *Compared) Rows(dir string, warnings []string, warn func(*solve.Diagnostics) []string, exact func(*solve.Policy) (eval.ExactValues, error)) ([]MethodRow, []string, error) {
	if warn == nil {
		warn = (*solve.Diagnostics).Warnings
	}
	var rows []MethodRow
	var methodWarnings []string
	for i, p := range res.Policies {
		dg := res.Diagnostics[i]
		dw := warn(dg)
		p.Warnings = append(append([]string(nil), warnings...), dw...)
		// The row is named by the problem's method: a method whose
		// settings were chosen may be written as behaviour cloning.
		method := string(res.Problems[i].Method)
		methodWarnings = append(methodWarnings, withMethod(method, dw)...)
		r := MethodRow{Method: method, Groups: len(p.Groups), Beta: p.Beta, Policy: filepath.Join(dir, method+".parquet")}
		if p.Method != solve.Behaviour {
			v := dg.NoEvidenceShare
			r.NoEvidenceShare = &v
		}
		if !math.IsNaN(p.ValueEstimate) {
			v := p.ValueEstimate
			r.ValueEstimate = &v
		}
		r.Disagreement = disagreement(res.Actions[i], res.Actions[0])
		if exact != nil {
			ev, err := exact(p)
			if err != nil {
				return nil, nil, err
			}
			r.OptimalValue, r.PolicyValue, r.Suboptimality = &ev.OptimalValue, &ev.PolicyValue, &ev.Suboptimality
			if !math.IsNaN(ev.ValueGap) {
				r.ValueGap = &ev.ValueGap
			}
		}
		rows = append(rows, r)
	}
	return rows, groupWarnings(methodWarnings), nil
}

// withMethod pairs each warning with the method it is about, as "method\x00warning".
func withMethod(method string, warnings []string) []string {
	out := make([]string, len(warnings))
	for i, w := range warnings {
		out[i] = method + "\x00" + w
	}
	return out
}

// groupWarnings prints each distinct warning once, in the order of first
// appearance, naming the methods it applies to: "sitewise, pooled: w".
func groupWarnings(tagged []string) []string {
	var order []string
	methods := map[string][]string{}
	for _, l := range tagged {
		m, w, _ := strings.Cut(l, "\x00")
		if _, ok := methods[w]; !ok {
			order = append(order, w)
		}
		methods[w] = append(methods[w], m)
	}
	out := make([]string, len(order))
	for i, w := range order {
		out[i] = strings.Join(methods[w], ", ") + ": " + w
	}
	return out
}

// disagreement is the share of sampled rows where a's action differs from
// ref's (0 without rows).
func disagreement(a, ref []int32) float64 {
	if len(a) == 0 {
		return 0
	}
	diff := 0
	for j := range a {
		if a[j] != ref[j] {
			diff++
		}
	}
	return float64(diff) / float64(len(a))
}

// WritePolicies writes each policy with write to its row's path. The
// files are independent: they are written in parallel (workers, 0: every
// core), and the first method's error is reported.
func (res *Compared) WritePolicies(ctx context.Context, rows []MethodRow, workers int, write func(path string, p *solve.Policy) error) error {
	policies := res.Policies
	errs := make([]error, len(policies))
	var wg sync.WaitGroup
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sem := make(chan struct{}, workers)
	stopWrite := timing.Start(ctx, "write")
	for i, p := range policies {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = write(rows[i].Policy, p)
		}()
	}
	wg.Wait()
	stopWrite()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// WriteComparison writes dir/compare.json: the rows, the observed care,
// the note and the held-out scoring, and returns its bytes. observed and
// note are null (and the evaluations too) when the shared evaluation did
// not run; note then says why. heldout is null (and the rows' heldout
// too) when the methods were not scored held out.
func WriteComparison(dir string, rows []MethodRow, observed []eval.ObservedValue, note string, heldout *HeldOutComparison) ([]byte, error) {
	var notePtr *string
	if note != "" {
		notePtr = &note
	}
	js, err := json.MarshalIndent(struct {
		Methods        []MethodRow          `json:"methods"`
		Observed       []eval.ObservedValue `json:"observed"`
		EvaluationNote *string              `json:"evaluation_note"`
		HeldOut        *HeldOutComparison   `json:"heldout"`
	}{rows, observed, notePtr, heldout}, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := fileio.WriteAtomic(filepath.Join(dir, "compare.json"), func(w io.Writer) error {
		_, err := w.Write(append(js, '\n'))
		return err
	}); err != nil {
		return nil, err
	}
	return js, nil
}
