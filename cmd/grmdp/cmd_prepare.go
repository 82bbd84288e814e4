package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

func prepareCommand() *cli.Command {
	o := &PrepareOptions{
		Data:      dataGroup{Prep: &prepGroup{}},
		Output:    outputGroup{usage: "Parquet `FILE` to write", required: true},
		RowGroups: rowGroupsGroup{usage: "at most this many rows per row group (default 1048576)"},
	}
	return withConfig(leaf(&cli.Command{
		Name:      "prepare",
		Usage:     "validate DATA and rewrite it sorted by (step, site, traj), with row groups aligned to steps (trajectories renumbered 0..N-1 in (site, traj) order; columns outside the contract are dropped)",
		ArgsUsage: "DATA...",
	}, o, []optionGroup{&o.Data, &o.Workers, &o.Memory, &o.Output, &o.RowGroups, own{[]cli.Flag{
		&cli.BoolFlag{Name: "out-of-core", Usage: "validate every row in one pass, then read and write one step at a time, holding two steps " +
			"instead of the whole input (automatic when it would not fit in --max-memory); the output is the same"},
	}, func(c *cli.Context) error {
		o.OutOfCore, o.Paths = c.Bool("out-of-core"), dataArgs(c)
		return nil
	}}}, runPrepare))
}

// PrepareOptions is what the command line of `grmdp prepare` says.
type PrepareOptions struct {
	Data      dataGroup
	Workers   workersGroup
	Memory    memoryGroup
	Output    outputGroup
	RowGroups rowGroupsGroup
	// OutOfCore asks for the streaming rewrite, which is chosen anyway
	// when the input would not fit in the memory limit.
	OutOfCore bool
	Paths     []string
}

// runPrepare rewrites the data sorted by step, in memory or one step at a
// time.
func runPrepare(ctx context.Context, po PrepareOptions, stdout, stderr io.Writer) error {
	o := po.Data.options()
	o.Workers, o.MaxMemory, o.OutOfCore = po.Workers.Workers, po.Memory.Value, po.OutOfCore
	o.Note, o.Progress = noteTo(stderr), barsTo(stderr)
	o.HeldTwice = true // the writer copies each step of the table
	o.RowsOnly = true
	note := o.Note
	o.Note = func(msg string) {
		note(strings.Replace(msg, "solving out of core instead, one pair of steps at a time", "preparing out of core instead, one step at a time", 1))
	}
	out, paths := po.Output.Path, po.Paths
	if err := prepareOutput(ctx, out); err != nil {
		return err
	}
	wo := parquetio.WriteOptions{Columns: o.Columns, List: o.Map.Kind == features.Precomputed, RowGroupRows: po.RowGroups.Rows}
	d, err := dataset.Open(ctx, paths, o)
	if err != nil {
		return dataErr(err)
	}
	var rows, H int
	if plan := d.Plan(); plan != nil {
		// Memory holds two steps: the window read and the chunk written.
		wo.StateColumns, wo.IntSites = d.Map().StateColumns, intLabels(plan.Sites)
		bar := newBar(stderr, "writing")
		bar.SetTotal(int64(plan.Rows))
		err = parquetio.WriteChunksSeq(out, streamedSteps(ctx, plan, wo.IntSites, bar), wo)
		bar.Finish()
		if err == nil {
			d.ReadAll()
		}
		rows, H = plan.Rows, plan.H
	} else {
		t := d.Table()
		if per := t.CensoredCount(); per != nil {
			n := 0
			for _, k := range per {
				n += k
			}
			note(fmt.Sprintf("%d episodes are censored (--nulls truncate): the prepared file holds their rows before the NULL "+
				"but does not mark them, so a read of it takes each to end at its last row; prepare with --nulls drop-episode to leave them out", n))
		}
		wo.StateColumns, wo.IntSites = d.Map().StateColumns, intLabels(t.Sites)
		steps := func(yield func(*traj.Chunk, error) bool) {
			for h := 1; h <= t.H; h++ {
				if t.Steps[h-1].Len() > 0 && !yield(t.StepChunk(h, wo.IntSites)) {
					return
				}
			}
		}
		err = parquetio.WriteChunksSeq(out, steps, wo)
		rows, H = t.Rows, t.H
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d rows sorted by (step, site, traj), row groups aligned to the %d steps\n", out, rows, H)
	return nil
}

// intLabels says whether every site label is a decimal integer: the site
// column is then written as integers, which read back in the same order.
func intLabels(sites []string) bool {
	for _, s := range sites {
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return false
		}
	}
	return true
}

// streamedSteps yields the rows of each step of the surveyed input that has
// rows, as the chunk the in-memory prepare writes for it (Table.StepChunk),
// reading step 1 alone and each later step h with step h-1, so that every
// duplicate and every gap is checked. Only the window read and the chunk
// yielded are held.
//
// The error is the one Read would report: Read reports the first duplicate
// (in step order) before any gap, so once a window finds a gap the later
// steps are still read, one at a time, for duplicates, and the gap is
// reported only when there are none.
func streamedSteps(ctx context.Context, plan *parquetio.Plan, intSites bool, progress *bar) iter.Seq2[*traj.Chunk, error] {
	return func(yield func(*traj.Chunk, error) bool) {
		var gap error
		for h := 1; h <= plan.H; h++ {
			n := 0
			for _, r := range plan.CellRows[h-1] {
				n += r
			}
			if n == 0 {
				continue
			}
			lo := max(h-1, 1)
			if gap != nil {
				lo = h // duplicates only
			}
			t, err := plan.ReadSteps(ctx, lo, h)
			switch {
			case err != nil && gap == nil && errors.Is(err, parquetio.ErrGap):
				gap = err
				continue
			case err != nil:
				yield(nil, err)
				return
			case gap != nil:
				continue
			}
			if !yield(t.StepChunk(h, intSites)) {
				return
			}
			progress.Add(int64(n))
		}
		if gap != nil {
			yield(nil, gap)
		}
	}
}
