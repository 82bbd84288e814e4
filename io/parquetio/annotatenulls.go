package parquetio

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// ColRecommendationNote names the column Annotate adds under a null policy
// ([traj.Options].Nulls): why a row has no recommendation (NULL for the
// rows it scored).
const ColRecommendationNote = "recommendation_note"

// annotateEpisode identifies an episode: its site and trajectory, as text.
type annotateEpisode struct{ site, traj string }

// nullCut is an episode's first NULL: its step and the state column that
// holds it.
type nullCut struct {
	step int64
	col  string
}

// rowNulls is, for each row of a row group, the state column whose NULL
// the row holds ("" for none), with the rows' episodes.
type rowNulls struct {
	col  []string
	keys []annotateEpisode
}

// decodeNulls decodes, for row group rg (n rows), which state column of
// each row is NULL and, when keys, each row's episode.
func decodeNulls(ctx context.Context, d *decoder, rg *file.RowGroupReader, n int64, af *annotateFile, loc rgLoc, keys bool) (*rowNulls, error) {
	rn := &rowNulls{col: make([]string, n)}
	for _, c := range af.state {
		if c.list {
			continue
		}
		d.missing = make([]bool, n)
		_, err := d.floats(ctx, rg, c, n, loc, make([]float64, 0, min(n, capHint)))
		miss := d.missing
		d.missing = nil
		if err != nil {
			return nil, err
		}
		for i, m := range miss {
			if m && rn.col[i] == "" {
				rn.col[i] = c.name
			}
		}
	}
	if !keys {
		return rn, nil
	}
	text := func(c *colSpec) ([]string, error) {
		if c.conv == convString {
			return d.strings(ctx, rg, c, n, loc, make([]string, 0, min(n, capHint)))
		}
		v, err := d.ints(ctx, rg, c, n, loc, make([]int64, 0, min(n, capHint)))
		if err != nil {
			return nil, err
		}
		out := make([]string, len(v))
		for i, x := range v {
			out[i] = strconv.FormatInt(x, 10)
		}
		return out, nil
	}
	var sites []string
	if af.site != nil {
		var err error
		if sites, err = text(af.site); err != nil {
			return nil, err
		}
	}
	trajs, err := text(af.traj)
	if err != nil {
		return nil, err
	}
	rn.keys = make([]annotateEpisode, n)
	for i := range rn.keys {
		rn.keys[i].traj = trajs[i]
		if sites != nil {
			rn.keys[i].site = sites[i]
		} else {
			rn.keys[i].site = af.hive
		}
	}
	return rn, nil
}

// findCuts reads every row group's state and episode columns and returns
// each episode's first NULL in a state column.
func (j *annotateJob) findCuts(ctx context.Context) error {
	j.cuts = map[annotateEpisode]nullCut{}
	return ordered(ctx, workers.Or(j.opts.Workers), len(j.tasks),
		func(ctx context.Context, i int) (map[annotateEpisode]nullCut, error) {
			t := j.tasks[i]
			af := j.byInfo[t.fi]
			fr, err := openReader(t.fi, j.props)
			if err != nil {
				return nil, err
			}
			defer fr.Close()
			rg := fr.RowGroup(t.loc.rg)
			n := rg.NumRows()
			d := decoderPool.Get().(*decoder)
			defer decoderPool.Put(d)
			steps, err := d.ints(ctx, rg, af.step, n, t.loc, make([]int64, 0, min(n, capHint)))
			if err != nil {
				return nil, err
			}
			rn, err := decodeNulls(ctx, d, rg, n, af, t.loc, true)
			if err != nil {
				return nil, err
			}
			out := map[annotateEpisode]nullCut{}
			for r, c := range rn.col {
				if c == "" {
					continue
				}
				h := steps[r] + af.shift
				if k, ok := out[rn.keys[r]]; !ok || h < k.step {
					out[rn.keys[r]] = nullCut{h, c}
				}
			}
			return out, nil
		},
		func(i int, m map[annotateEpisode]nullCut) error {
			for k, c := range m {
				if o, ok := j.cuts[k]; !ok || c.step < o.step {
					j.cuts[k] = c
				}
			}
			return nil
		}, nil)
}

// notes returns, for each row of a row group, why it is not scored ("" for
// a row that is): a NULL in one of its state columns, or its episode's
// NULL at an earlier step (NullsTruncate) or any step (NullsDropEpisode).
func (j *annotateJob) notes(ctx context.Context, d *decoder, rg *file.RowGroupReader, n int64, af *annotateFile, loc rgLoc, steps []int64) ([]string, error) {
	rn, err := decodeNulls(ctx, d, rg, n, af, loc, len(j.cuts) > 0)
	if err != nil {
		return nil, err
	}
	notes := make([]string, n)
	for i, c := range rn.col {
		if c != "" {
			notes[i] = "null state column " + c
			continue
		}
		if rn.keys == nil {
			continue
		}
		cut, ok := j.cuts[rn.keys[i]]
		switch {
		case !ok:
		case j.opts.Nulls == traj.NullsDropEpisode:
			notes[i] = fmt.Sprintf("episode dropped: null state column %s at step %d", cut.col, cut.step-af.shift)
		case steps[i] >= cut.step:
			notes[i] = fmt.Sprintf("episode truncated: null state column %s at step %d", cut.col, cut.step-af.shift)
		}
	}
	return notes, nil
}
