package dataset

import (
	"context"
	"errors"
	"iter"
	"strconv"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// WriteSorted opens the data at paths as [Open] does and writes their
// rows to path, sorted by (step, site, traj) with row groups aligned to
// steps, trajectories renumbered 0..N-1 in (site, traj) order and the
// columns outside the contract dropped; at most rowGroupRows rows per row
// group (0: the writer's default). Data that fit in o.MaxMemory, counting
// the copy the writer makes, are written from memory; others (and every
// map can be) are read one step at a time with the step before it, so
// that every duplicate and every gap is checked, holding two steps. It
// returns the rows written and H. Episodes censored at a NULL are written
// as they were cut, unmarked, with a [CensoredWritten] note.
func WriteSorted(ctx context.Context, paths []string, o Options, path string, rowGroupRows int) (rows, H int, err error) {
	o.rowsOnly, o.heldTwice = true, true
	d, err := Open(ctx, paths, o)
	if err != nil {
		return 0, 0, err
	}
	return d.writeSorted(ctx, path, rowGroupRows)
}

func (d *Data) writeSorted(ctx context.Context, path string, rowGroupRows int) (rows, H int, err error) {
	wo := parquetio.WriteOptions{Columns: d.opts.Columns, List: d.opts.Map.Kind == features.Precomputed, RowGroupRows: rowGroupRows,
		StateColumns: d.fmap.StateColumns}
	if plan := d.plan; plan != nil {
		wo.IntSites = intLabels(plan.Sites)
		bar := d.opts.progress("writing")
		bar.SetTotal(int64(plan.Rows))
		err = parquetio.WriteChunksSeq(path, streamedSteps(ctx, plan, wo.IntSites, bar), wo)
		bar.Finish()
		if err != nil {
			return 0, 0, err
		}
		d.ReadAll()
		return plan.Rows, plan.H, nil
	}
	t := d.table
	censored := 0
	for _, n := range t.CensoredCount() {
		censored += n
	}
	if censored > 0 {
		d.opts.note(Note{Kind: CensoredWritten, Censored: censored})
	}
	wo.IntSites = intLabels(t.Sites)
	steps := func(yield func(*traj.Chunk, error) bool) {
		for h := 1; h <= t.H; h++ {
			if t.Steps[h-1].Len() > 0 && !yield(t.StepChunk(h, wo.IntSites)) {
				return
			}
		}
	}
	if err := parquetio.WriteChunksSeq(path, steps, wo); err != nil {
		return 0, 0, err
	}
	return t.Rows, t.H, nil
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
func streamedSteps(ctx context.Context, plan *parquetio.Plan, intSites bool, progress Progress) iter.Seq2[*traj.Chunk, error] {
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
