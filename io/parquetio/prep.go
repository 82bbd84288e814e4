package parquetio

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/grmdp/grmdp/traj"
)

// stepSource is one file's step column, for resolveFirstStep.
type stepSource struct {
	fi   *fileInfo
	step *colSpec
}

// resolveFirstStep resolves opts.FirstStep: StepsDetect becomes StepsFrom0
// when the smallest step in the files is 0 and StepsFrom1 otherwise. It
// returns the shift to add to every step and, when detection chose
// StepsFrom0, the first file (in input order) holding a step 0. The
// smallest step of a row group comes from its footer's statistics when
// they give one, else from decoding its step column.
func resolveFirstStep(ctx context.Context, srcs []stepSource, opts *traj.Options, props *parquet.ReaderProperties) (int64, string, error) {
	if opts.FirstStep != traj.StepsDetect {
		return opts.FirstStep.Shift(), "", nil
	}
	opts.FirstStep = traj.StepsFrom1
	best, where := int64(1), ""
	for _, s := range srcs {
		var row0 int64
		for rg := range s.fi.md.NumRowGroups() {
			rows := s.fi.md.RowGroup(rg).NumRows()
			loc := rgLoc{file: s.fi.path, rg: rg, row0: row0}
			row0 += rows
			if rows == 0 {
				continue
			}
			lo, ok := statsMin(s.fi.md, rg, s.step)
			if !ok {
				var err error
				if lo, err = decodeMinStep(ctx, s.fi, s.step, loc, props); err != nil {
					return 0, "", err
				}
			}
			if lo < best {
				best = lo
				if lo == 0 {
					where = s.fi.path
				}
			}
		}
		if best <= 0 {
			break
		}
	}
	if best != 0 {
		return 0, "", nil
	}
	opts.FirstStep = traj.StepsFrom0
	return 1, where, nil
}

// statsMin returns a row group's smallest step from its footer's
// statistics, for plain signed integer columns that have them.
func statsMin(md *metadata.FileMetaData, rg int, c *colSpec) (lo int64, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	cc, err := md.RowGroup(rg).ColumnChunk(c.leaf)
	if err != nil {
		return 0, false
	}
	if set, err := cc.StatsSet(); err != nil || !set {
		return 0, false
	}
	st, err := cc.Statistics()
	if err != nil || st == nil || !st.HasMinMax() {
		return 0, false
	}
	switch c.conv {
	case convInt32:
		if s, ok := st.(*metadata.Int32Statistics); ok {
			return int64(s.Min()), true
		}
	case convInt64:
		if s, ok := st.(*metadata.Int64Statistics); ok {
			return s.Min(), true
		}
	}
	return 0, false
}

// decodeMinStep decodes a row group's step column and returns its smallest
// value.
func decodeMinStep(ctx context.Context, fi *fileInfo, c *colSpec, loc rgLoc, props *parquet.ReaderProperties) (int64, error) {
	var lo int64
	_, err := withDecoder(rgTask{fi: fi, loc: loc}, props, func(fr *file.Reader, d *decoder) (*traj.Chunk, error) {
		rg := fr.RowGroup(loc.rg)
		steps, err := d.ints(ctx, rg, c, rg.NumRows(), loc, nil)
		if err != nil {
			return nil, err
		}
		lo = 1
		for _, h := range steps {
			lo = min(lo, h)
		}
		return nil, nil
	})
	return lo, err
}

// firstStep resolves opts.FirstStep for infos (resolveFirstStep) and sets
// every layout's shift.
func firstStep(ctx context.Context, infos []*fileInfo, opts *traj.Options, props *parquet.ReaderProperties) (string, error) {
	srcs := make([]stepSource, len(infos))
	for i, fi := range infos {
		srcs[i] = stepSource{fi, fi.lay.step}
	}
	shift, where, err := resolveFirstStep(ctx, srcs, opts, props)
	if err != nil {
		return "", err
	}
	for _, fi := range infos {
		fi.lay.shift = shift
	}
	return where, nil
}

// DetectFirstStep resolves opts.FirstStep for the inputs paths as Read
// does (StepsDetect becomes StepsFrom0 when their smallest step is 0),
// reading only footers and, where they lack statistics, step columns. It
// returns the numbering and, when detection chose StepsFrom0, the first
// file holding a step 0.
func DetectFirstStep(ctx context.Context, paths []string, opts traj.Options) (traj.FirstStep, string, error) {
	if opts.FirstStep != traj.StepsDetect {
		return opts.FirstStep, "", nil
	}
	cols := opts.Columns.WithDefaults()
	ins, err := expandPaths(paths, cols.Site)
	if err != nil {
		return 0, "", err
	}
	srcs := make([]stepSource, len(ins))
	for i, in := range ins {
		fi := &fileInfo{input: in}
		if fi.size, fi.fp, fi.md, err = openFooter(in.path); err != nil {
			return 0, "", err
		}
		c, err := stepColumn(fi, cols.Step)
		if err != nil {
			return 0, "", err
		}
		srcs[i] = stepSource{fi, c}
	}
	_, where, err := resolveFirstStep(ctx, srcs, &opts, readerProps(memory.DefaultAllocator))
	return opts.FirstStep, where, err
}

// stepColumn resolves the step column of a file.
func stepColumn(fi *fileInfo, name string) (c *colSpec, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fileErr(fi.path, "cannot read the parquet schema: %v", r)
		}
	}()
	return resolveColumn(fi.md.Schema, fi.path, name, wantInt, false)
}
