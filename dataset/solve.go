package dataset

import (
	"context"
	"errors"
	"fmt"

	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/solve"
)

// Solved is one method's result: its policy and diagnostics over every
// row, and the solver (in memory only; nil out of core), whose statistics
// and factorisations a caller may reuse (solve.Solver.WithPenalty).
type Solved struct {
	Solver      *solve.Solver
	Policy      *solve.Policy
	Diagnostics *solve.Diagnostics
}

// Compared is every method's result: its problem, policy, diagnostics and
// recommended actions at a systematic sample of data rows
// (solve.SampleStride).
type Compared struct {
	Problems    []solve.Problem
	Policies    []*solve.Policy
	Diagnostics []*solve.Diagnostics
	Actions     [][]int32
}

// ErrStationaryStreamed is returned by the solves of data opened out of
// core for stationary settings, which pool every step's rows.
var ErrStationaryStreamed = solve.ErrStationaryStreamed

// Solve solves prob under s, with its diagnostics over every row.
func (d *Data) Solve(ctx context.Context, s solve.Settings, prob solve.Problem) (*Solved, error) {
	if d.table == nil {
		res, err := d.streamed(ctx, s, []solve.Problem{prob})
		if err != nil {
			return nil, err
		}
		d.record(res.Policies[0])
		return &Solved{Policy: res.Policies[0], Diagnostics: res.Diagnostics[0]}, nil
	}
	sv := solve.NewSolver(d.stats, s)
	p, err := sv.Solve(ctx, prob)
	if err != nil {
		return nil, err
	}
	d.record(p)
	stop := timing.Start(ctx, "diagnostics")
	diag := solve.Diagnose(d.stats, p)
	stop()
	return &Solved{Solver: sv, Policy: p, Diagnostics: diag}, nil
}

// PolicyOptions say how [Data.SolvePolicy] solves, records and writes a
// policy.
type PolicyOptions struct {
	Settings solve.Settings
	Problem  solve.Problem
	// Select, when not nil, chooses the settings by a cross-fitted choice
	// among its candidates first ([Data.SolveSelected]); its Settings and
	// Problem are the ones above.
	Select *SelectOptions
	// Warnings open the policy's warnings, followed by Warn's words for
	// its diagnostics' findings.
	Warnings []string
	Warn     func(*solve.Diagnostics) []string
	// Version and Record are recorded in the policy (its Version and
	// Settings).
	Version string
	Record  map[string]string
	// Path, if not "", is the file the policy is written to
	// ([WritePolicy]).
	Path string
}

// SolvePolicy solves o.Problem (choosing its settings first with
// o.Select), records o's warnings, version and settings in the policy and
// writes it to o.Path.
func (d *Data) SolvePolicy(ctx context.Context, o PolicyOptions) (*Solved, error) {
	var res *Solved
	var err error
	if o.Select != nil {
		so := *o.Select
		so.Settings, so.Problem = o.Settings, o.Problem
		res, _, err = d.SolveSelected(ctx, so)
	} else {
		res, err = d.Solve(ctx, o.Settings, o.Problem)
	}
	if err != nil {
		return nil, err
	}
	p := res.Policy
	p.Warnings, p.Version, p.Settings = o.Warnings, o.Version, o.Record
	if o.Warn != nil {
		p.Warnings = append(p.Warnings, o.Warn(res.Diagnostics)...)
	}
	if o.Path != "" {
		stop := timing.Start(ctx, "write")
		err = WritePolicy(o.Path, p)
		stop()
	}
	return res, err
}

// SolveAll solves every problem under s, with each policy's diagnostics
// and its actions at a systematic sample of rows.
func (d *Data) SolveAll(ctx context.Context, s solve.Settings, probs []solve.Problem) (*Compared, error) {
	if d.table == nil {
		res, err := d.streamed(ctx, s, probs)
		if err != nil {
			return nil, err
		}
		for _, p := range res.Policies {
			d.record(p)
		}
		return &Compared{Problems: probs, Policies: res.Policies, Diagnostics: res.Diagnostics, Actions: res.Actions}, nil
	}
	res := &Compared{Problems: probs}
	sv := solve.NewSolver(d.stats, s)
	// Every method's backward passes in one lockstep sweep per round.
	if err := sv.Prepare(ctx, probs); err != nil {
		return nil, err
	}
	stop := timing.Start(ctx, "policies")
	for _, prob := range probs {
		p, err := sv.Solve(ctx, prob)
		if err != nil {
			stop()
			return nil, fmt.Errorf("%s: %w", prob.Method, err)
		}
		d.record(p)
		res.Policies = append(res.Policies, p)
	}
	stop()
	t := d.table
	var evidence [][]bool
	var err error
	stop = timing.Start(ctx, "sampled actions")
	res.Actions, evidence, err = solve.ActAllMany(ctx, res.Policies, t, s.Workers, solve.SampleStride(t))
	stop()
	if err != nil {
		return nil, err
	}
	stop = timing.Start(ctx, "diagnostics")
	for i, p := range res.Policies {
		res.Diagnostics = append(res.Diagnostics, solve.DiagnoseSampled(d.stats, p, evidence[i]))
	}
	stop()
	return res, nil
}

// streamed solves probs out of core, one pair of steps at a time.
func (d *Data) streamed(ctx context.Context, s solve.Settings, probs []solve.Problem) (*solve.Streamed, error) {
	defer timing.Start(ctx, "out of core: rounds")()
	res, err := solve.SolveStreamed(ctx, d.plan, d.fmap, d.blocks, s, probs, d.plan.CellRows, d.plan.Rows)
	if err == nil {
		d.ReadAll()
	}
	if errors.Is(err, solve.ErrStationaryStreamed) {
		return nil, err
	}
	return res, err
}
