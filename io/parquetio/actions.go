package parquetio

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// CheckActions checks the action column (opts.Columns.Action) of the
// Parquet inputs against a policy's action set before the policy is applied
// to them: with opts.ActionLabels set, the column must hold strings, each
// one of the labels; otherwise it must hold integers in 0..opts.Actions-1
// (any nonnegative integer when opts.Actions is 0). Inputs without the
// column pass, since applying a policy needs only steps and states.
//
// Only the action column is decoded, row group by row group in parallel
// (opts.Workers), and the first bad value in input order is reported as a
// *[traj.RowError] naming file, row group, row and column, wrapping ErrBadData
// (a value outside the set) or ErrSchema (a column of the wrong kind).
func CheckActions(ctx context.Context, paths []string, opts traj.Options) error {
	cols := opts.Columns.WithDefaults()
	ins, err := expandPaths(paths, cols.Site)
	if err != nil {
		return err
	}
	if len(ins) == 0 {
		return fmt.Errorf("parquetio: no parquet files in %v: %w", paths, ErrNoData)
	}
	labels := opts.ActionLabels
	var tasks []rgTask
	specs := map[*fileInfo]*colSpec{}
	for _, in := range ins {
		fi := &fileInfo{input: in}
		if fi.size, fi.fp, fi.md, err = openFooter(in.path); err != nil {
			return err
		}
		c, err := actionColumn(fi, cols.Action)
		if err != nil {
			return err
		}
		if c == nil {
			continue
		}
		isStr := c.conv == convString
		switch {
		case labels != nil && !isStr:
			return &traj.RowError{File: in.path, RowGroup: -1, Row: -1, Column: cols.Action,
				Msg: fmt.Sprintf("holds integers, but the policy's actions are the labels %v: apply it to data labelled the same way", labels), Err: ErrSchema}
		case labels == nil && isStr:
			return &traj.RowError{File: in.path, RowGroup: -1, Row: -1, Column: cols.Action,
				Msg: fmt.Sprintf("holds labels, but the policy's actions are the integers 0..%d: apply it to data coded the same way", max(opts.Actions-1, 0)), Err: ErrSchema}
		}
		// Under a null policy the rows with a null action are dropped, not
		// checked.
		c.nullHint, c.nullable = true, opts.Nulls != traj.NullsError
		specs[fi] = c
		var row0 int64
		for rg := range fi.md.NumRowGroups() {
			n := fi.md.RowGroup(rg).NumRows()
			if n > 0 {
				tasks = append(tasks, rgTask{fi: fi, loc: rgLoc{file: in.path, rg: rg, row0: row0}})
			}
			row0 += n
		}
	}
	known := make(map[string]bool, len(labels))
	for _, l := range labels {
		known[l] = true
	}
	props := readerProps(memory.DefaultAllocator)
	return ordered(ctx, workers.Or(opts.Workers), len(tasks),
		func(ctx context.Context, i int) (struct{}, error) {
			return struct{}{}, checkActionGroup(ctx, tasks[i], specs[tasks[i].fi], labels, known, opts.Actions, props)
		},
		func(int, struct{}) error { return nil }, nil)
}

// actionColumn resolves the optional action column of a file.
func actionColumn(fi *fileInfo, name string) (c *colSpec, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fileErr(fi.path, "cannot read the parquet schema: %v", r)
		}
	}()
	return resolveColumn(fi.md.Schema, fi.path, name, wantIntOrString, true)
}

func checkActionGroup(ctx context.Context, t rgTask, c *colSpec, labels []string, known map[string]bool, A int, props *parquet.ReaderProperties) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = t.loc.parquetErr(c.name, "cannot decode: %v", r)
		}
	}()
	fr, err := openReader(t.fi, props)
	if err != nil {
		return err
	}
	defer fr.Close()
	d := decoderPool.Get().(*decoder)
	defer decoderPool.Put(d)
	rg := fr.RowGroup(t.loc.rg)
	n := rg.NumRows()
	if c.nullable {
		d.missing = make([]bool, n)
		defer func() { d.missing = nil }()
	}
	skip := func(i int) bool { return d.missing != nil && d.missing[i] }
	if c.conv == convString {
		vals, err := d.strings(ctx, rg, c, n, t.loc, make([]string, 0, min(n, capHint)))
		if err != nil {
			return err
		}
		for i, v := range vals {
			if !known[v] && !skip(i) {
				return t.loc.badValue(c.name, int64(i), "unknown action label %q: the policy's actions are %v; it cannot be applied to data with other actions", v, labels)
			}
		}
		return nil
	}
	vals, err := d.ints(ctx, rg, c, n, t.loc, make([]int64, 0, min(n, capHint)))
	if err != nil {
		return err
	}
	for i, v := range vals {
		if (v < 0 || (A > 0 && v >= int64(A))) && !skip(i) {
			return t.loc.badValue(c.name, int64(i), "action %d is outside the policy's actions 0..%d; it cannot be applied to data with other actions", v, A-1)
		}
	}
	return nil
}
