package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// outOfCoreFlag is --out-of-core, for the commands that solve.
func outOfCoreFlag() cli.Flag {
	return &cli.BoolFlag{Name: "out-of-core", Usage: "read the data one pair of steps at a time instead of holding them in memory " +
		"(automatic when they would not fit in --max-memory); after grmdp prepare each round reads only its own row groups"}
}

// streamed is an input to be solved out of core: the survey's plan, the
// feature map and its blocks.
type streamed struct {
	plan   *parquetio.Plan
	m      features.Map
	blocks features.Blocks
	// stderr receives the note on 0-based steps (zeroStepFile) once the
	// rows have been read without error, as loadData gives it in memory.
	stderr       io.Writer
	zeroStepFile string
}

// solve solves probs out of core.
func (sd *streamed) solve(ctx context.Context, s solve.Settings, probs []solve.Problem) (*solve.Streamed, error) {
	defer timing.Start(ctx, "out of core: rounds")()
	res, err := solve.SolveStreamed(ctx, sd.plan, sd.m, sd.blocks, s, probs, sd.plan.CellRows, sd.plan.Rows)
	if err == nil {
		prepNotes(sd.stderr, sd.zeroStepFile, traj.NullsError, nil)
	}
	if errors.Is(err, solve.ErrStationaryStreamed) {
		return nil, usagef("--stationary needs every step's rows at once and cannot run out of core: raise --max-memory or drop --stationary")
	}
	return res, err
}

// whyNotStreamed says why a job cannot run out of core, or "" when it can.
func whyNotStreamed(o dataOptions, s solve.Settings, extra string) string {
	switch {
	case o.Kind == features.Precomputed:
		return "the precomputed map's block structure is found from every row at once"
	case s.Stationary:
		return "--stationary pools every step's rows in each regression"
	case quantileBins(o.Bins):
		return "quantile bins (--bins COL:qK) are computed from every row at once: give the cut points instead"
	}
	return extra
}

// openData reads the data into memory, or surveys them for an out-of-core
// solve: with --out-of-core, or when they would not fit in --max-memory and
// the job can run out of core (why is "" then; otherwise the refusal
// stands). A note on stderr says when the switch is automatic. It is the
// one place that chooses between the two: the commands use the data it
// returns the same way either way.
func openData(ctx context.Context, o dataOptions, paths []string, why string, stderr io.Writer) (data, error) {
	var sd *streamed
	streaming, err := outOfCore(o, paths, why, stderr, "solving out of core instead, one pair of steps at a time", func() (err error) {
		sd, err = surveyData(ctx, o, paths, stderr)
		return err
	})
	if err != nil {
		return nil, err
	}
	if streaming {
		return sd, nil
	}
	ds, err := loadData(ctx, o, paths, stderr)
	if err != nil {
		return nil, err
	}
	return inMemory{ds}, nil
}

// outOfCore is the pre-read check of a job that can run out of core (why
// is "" then; otherwise it says why not): the job runs out of core with
// --out-of-core (refused when why is not ""), or when checkMemory finds
// that its rows would not fit in --max-memory. outOfCore then runs survey
// (surveyData, surveyPlan), which fails with errTooLarge when even the rows
// the job holds at once would not fit: checkMemory's refusal then stands.
// An automatic switch is noted on stderr, the note ending with instead.
// outOfCore returns true when the job runs out of core (survey ran without
// error); false and no error mean that the caller reads the data into
// memory (loadData, which repeats checkMemory and reports its other
// errors).
func outOfCore(o dataOptions, paths []string, why string, stderr io.Writer, instead string, survey func() error) (bool, error) {
	if o.OutOfCore {
		if why != "" {
			return false, usagef("--out-of-core: %s", why)
		}
		return true, survey()
	}
	if len(paths) > 0 {
		if err := o.resolveState(paths); err != nil {
			return false, err
		}
	}
	limit, err := o.memoryLimit()
	if err != nil {
		return false, err
	}
	if len(paths) == 0 || why != "" {
		return false, nil
	}
	tooLarge := checkMemory(limit, o, paths)
	if !errors.Is(tooLarge, errTooLarge) {
		return false, nil
	}
	err = survey()
	if errors.Is(err, errTooLarge) {
		// Not even what the job holds at once fits: the first refusal
		// stands.
		return false, tooLarge
	}
	if err != nil {
		return false, err
	}
	fmt.Fprintf(stderr, "grmdp: note: %s; %s\n", rowsOnly(tooLarge), instead)
	return true, nil
}

// rowsOnly shortens checkMemory's refusal to its finding.
func rowsOnly(err error) string {
	msg := err.Error()
	for i := 0; i+len(" allows") <= len(msg); i++ {
		if msg[i:i+len(" allows")] == " allows" {
			return msg[:i+len(" allows")]
		}
	}
	return msg
}

// surveyData validates every row once without keeping them and returns
// what the out-of-core rounds need. It refuses data of which even one pair
// of steps would not fit in --max-memory.
func surveyData(ctx context.Context, o dataOptions, paths []string, stderr io.Writer) (*streamed, error) {
	defer timing.Start(ctx, "out of core: survey")()
	plan, need, err := surveyPlan(ctx, &o, paths, stderr)
	if err != nil {
		return nil, err
	}
	limit, err := o.memoryLimit()
	if err != nil {
		return nil, err
	}
	m := features.Map{Kind: o.Kind, A: plan.A, StateColumns: o.State}
	switch o.Kind {
	case features.Tabular:
		m.S = o.NumStates
		if m.S == 0 {
			m.S = int(plan.MaxState) + 1
		}
	case features.ActionBlock:
		m.P = plan.W
	case features.Binned, features.SoftBinned:
		m.Bins = o.Bins
	}
	if err := checkStatsMemory(limit, paths, need, len(plan.Sites), plan.H, packedSize(m), m.Dim()); err != nil {
		return nil, err
	}
	return &streamed{plan: plan, m: m, blocks: m.Blocks(), stderr: stderr, zeroStepFile: o.zeroStepFile}, nil
}

// surveyPlan validates every row once without keeping them
// (parquetio.Survey), resolving o's state columns first, and returns the
// plan and the memory that one pair of adjacent steps needs. It refuses,
// with errTooLarge, data of which even one pair of steps would not fit in
// --max-memory.
func surveyPlan(ctx context.Context, o *dataOptions, paths []string, stderr io.Writer) (*parquetio.Plan, int64, error) {
	if len(paths) == 0 {
		return nil, 0, usagef("no DATA given: name one or more Parquet files, directories or globs")
	}
	if err := o.resolveState(paths); err != nil {
		return nil, 0, err
	}
	limit, err := o.memoryLimit()
	if err != nil {
		return nil, 0, err
	}
	setReadingHeadroom()
	bar := newBar(stderr, "surveying")
	if o.Nulls != traj.NullsError {
		bar.finish()
		return nil, 0, usagef("--nulls %s needs the whole input in memory, which does not fit in --max-memory: raise --max-memory, or drop the rows with NULLs before reading", o.Nulls)
	}
	detectFirstStep(ctx, o, paths)
	plan, err := parquetio.Survey(ctx, paths, o.readOptions(bar))
	bar.finish()
	if err != nil {
		return nil, 0, err
	}
	// The note on 0-based steps waits until every row has been read.
	o.zeroStepFile = cmp.Or(o.zeroStepFile, plan.ZeroStepFile)
	if plan.Actions != nil && o.Actions > 0 && o.Actions != len(plan.Actions) {
		return nil, 0, usagef("--actions %d: the action column holds %d string labels %v; --actions applies to integer actions", o.Actions, len(plan.Actions), plan.Actions)
	}
	// The largest window: two adjacent steps.
	window := 0
	for h := range plan.CellRows {
		n := 0
		for u := h; u < min(h+2, len(plan.CellRows)); u++ {
			for _, r := range plan.CellRows[u] {
				n += r
			}
		}
		window = max(window, n)
	}
	need := parquetio.EstimateMemoryHeldTwice(int64(window), plan.W, o.Kind == features.Precomputed)
	if limit.bytes > 0 && need > limit.bytes {
		return nil, 0, &tooLargeError{fmt.Sprintf("%s: even one pair of steps (%d rows) needs about %s of memory, more than --max-memory %s allows: "+
			"raise --max-memory (0 = no limit) if the machine has the memory", describePaths(paths), window, formatSize(need), limit.desc)}
	}
	return plan, need, nil
}
