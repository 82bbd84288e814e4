package main

import (
	"context"
	"fmt"

	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/solve"
)

// data is the input of a command that solves: its rows held in memory, or
// surveyed to be read one pair of steps at a time. Commands call it the
// same way either way; openData alone chooses which (inMemory or
// *streamed).
type data interface {
	// sites are the data's sites, in the order of the statistics.
	sites() []string
	// warnings are about how the data meet the feature map.
	warnings() []string
	// solveOne solves prob with its diagnostics over every row, and
	// returns the solver (for --c-path) when the rows are in memory.
	solveOne(ctx context.Context, s solve.Settings, prob solve.Problem) (*solve.Solver, *solve.Policy, *solve.Diagnostics, error)
	// solveAll solves every problem, with each policy's diagnostics and
	// its actions at a systematic sample of rows (compare).
	solveAll(ctx context.Context, s solve.Settings, probs []solve.Problem) (*compared, error)
	// held returns the data in memory, or, out of core, a usage error
	// saying that need needs them there.
	held(need string) (*dataset, error)
}

// inMemory is data whose rows are held in memory.
type inMemory struct{ ds *dataset }

func (d inMemory) sites() []string               { return d.ds.Table.Sites }
func (d inMemory) warnings() []string            { return d.ds.Warnings }
func (d inMemory) held(string) (*dataset, error) { return d.ds, nil }

func (d inMemory) solveOne(ctx context.Context, s solve.Settings, prob solve.Problem) (*solve.Solver, *solve.Policy, *solve.Diagnostics, error) {
	sv := solve.NewSolver(d.ds.Stats, s)
	p, err := sv.Solve(ctx, prob)
	if err != nil {
		return nil, nil, nil, err
	}
	stop := timing.Start(ctx, "diagnostics")
	diag := solve.Diagnose(d.ds.Stats, p)
	stop()
	return sv, p, diag, nil
}

func (d inMemory) solveAll(ctx context.Context, s solve.Settings, probs []solve.Problem) (*compared, error) {
	res := &compared{probs: probs}
	sv := solve.NewSolver(d.ds.Stats, s)
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
		res.policies = append(res.policies, p)
	}
	stop()
	t := d.ds.Table
	var evidence [][]bool
	var err error
	stop = timing.Start(ctx, "sampled actions")
	res.actions, evidence, err = solve.ActAllMany(ctx, res.policies, t, s.Workers, solve.SampleStride(t))
	stop()
	if err != nil {
		return nil, err
	}
	stop = timing.Start(ctx, "diagnostics")
	for i, p := range res.policies {
		res.diags = append(res.diags, solve.DiagnoseSampled(d.ds.Stats, p, evidence[i]))
	}
	stop()
	return res, nil
}

func (sd *streamed) sites() []string    { return sd.plan.Sites }
func (sd *streamed) warnings() []string { return nil }

func (sd *streamed) held(need string) (*dataset, error) {
	return nil, usagef("%s needs the data in memory: drop --out-of-core or raise --max-memory", need)
}

func (sd *streamed) solveOne(ctx context.Context, s solve.Settings, prob solve.Problem) (*solve.Solver, *solve.Policy, *solve.Diagnostics, error) {
	res, err := sd.solve(ctx, s, []solve.Problem{prob})
	if err != nil {
		return nil, nil, nil, err
	}
	return nil, res.Policies[0], res.Diagnostics[0], nil
}

func (sd *streamed) solveAll(ctx context.Context, s solve.Settings, probs []solve.Problem) (*compared, error) {
	res, err := sd.solve(ctx, s, probs)
	if err != nil {
		return nil, err
	}
	return &compared{probs: probs, policies: res.Policies, diags: res.Diagnostics, actions: res.Actions}, nil
}
