package parquetio

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// SiteTrajectories reads the site and trajectory columns of paths, and no
// other, and returns the sites in the order [Read] gives them (integer
// labels by value, text labels in string order) with each site's number
// of distinct trajectories. Only opts.Columns' site and trajectory
// names and opts.Workers are read; the other columns are neither looked
// up nor validated.
func SiteTrajectories(ctx context.Context, paths []string, opts traj.Options) (sites []string, trajectories []int, err error) {
	cols := opts.Columns.WithDefaults()
	infos, hiveInt, err := openKeyInputs(ctx, paths, opts.Workers, cols)
	if err != nil {
		return nil, nil, err
	}
	tasks := planRowGroups(infos)
	props := readerProps(memory.DefaultAllocator)
	type key struct {
		id  int64
		str string
	}
	labels := map[key]string{}
	seen := map[string]map[key]struct{}{}
	numeric := true
	err = ordered(ctx, workers.Or(opts.Workers), len(tasks),
		func(ctx context.Context, i int) (*traj.Chunk, error) {
			return withDecoder(tasks[i], props, func(fr *file.Reader, d *decoder) (*traj.Chunk, error) {
				return d.decodeKeys(ctx, fr, tasks[i].fi.lay, hiveInt, tasks[i].loc)
			})
		},
		func(_ int, ch *traj.Chunk) error {
			for r := range max(len(ch.SiteInt), len(ch.SiteStr)) {
				var s, t key
				if ch.SiteStr != nil {
					s.str, numeric = ch.SiteStr[r], false
				} else {
					s.id = ch.SiteInt[r]
				}
				if ch.TrajStr != nil {
					t.str = ch.TrajStr[r]
				} else {
					t.id = ch.TrajInt[r]
				}
				label, ok := labels[s]
				if !ok {
					label = s.str
					if ch.SiteStr == nil {
						label = strconv.FormatInt(s.id, 10)
					}
					labels[s] = label
					seen[label] = map[key]struct{}{}
				}
				seen[label][t] = struct{}{}
			}
			return nil
		}, nil)
	if err != nil {
		return nil, nil, err
	}
	for l := range seen {
		sites = append(sites, l)
	}
	if numeric {
		slices.SortFunc(sites, func(a, b string) int {
			x, _ := strconv.ParseInt(a, 10, 64)
			y, _ := strconv.ParseInt(b, 10, 64)
			return cmp.Compare(x, y)
		})
	} else {
		slices.Sort(sites)
	}
	for _, s := range sites {
		trajectories = append(trajectories, len(seen[s]))
	}
	return sites, trajectories, nil
}

// openKeyInputs opens the inputs as openInputs does, resolving only their
// site and trajectory columns.
func openKeyInputs(ctx context.Context, paths []string, w int, cols traj.Columns) ([]*fileInfo, bool, error) {
	ins, err := expandPaths(paths, cols.Site)
	if err != nil {
		return nil, false, err
	}
	if len(ins) == 0 {
		return nil, false, fmt.Errorf("parquetio: no parquet files in %v: %w", paths, ErrNoData)
	}
	infos := make([]*fileInfo, len(ins))
	err = ordered(ctx, workers.Or(w), len(ins),
		func(ctx context.Context, i int) (*fileInfo, error) {
			fi := &fileInfo{input: ins[i]}
			var err error
			if fi.size, fi.fp, fi.md, err = openFooter(fi.path); err != nil {
				return nil, err
			}
			fi.lay, err = keyLayout(fi, cols)
			return fi, err
		},
		func(i int, fi *fileInfo) error {
			infos[i] = fi
			return nil
		}, nil)
	if err != nil {
		return nil, false, err
	}
	var hive []input
	for _, fi := range infos {
		if fi.lay.site == nil {
			hive = append(hive, fi.input)
		}
	}
	hiveInt := hiveInts(hive)
	if err := sameKinds(infos, cols, hiveInt); err != nil {
		return nil, false, err
	}
	return infos, hiveInt, nil
}

// keyLayout resolves a file's site and trajectory columns.
func keyLayout(fi *fileInfo, cols traj.Columns) (lay *layout, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fileErr(fi.path, "cannot read the parquet schema: %v", r)
		}
	}()
	var l layout
	sc := fi.md.Schema
	if l.site, err = resolveColumn(sc, fi.path, cols.Site, wantIntOrString, fi.hasHive); err != nil {
		return nil, err
	}
	if l.site == nil {
		l.hiveSite = fi.hive
	}
	if l.traj, err = resolveColumn(sc, fi.path, cols.Traj, wantIntOrString, false); err != nil {
		return nil, err
	}
	return &l, nil
}

// decodeKeys decodes the site (or its hive value) and trajectory columns
// of one row group into a Chunk holding only those.
func (d *decoder) decodeKeys(ctx context.Context, fr *file.Reader, lay *layout, hiveInt bool, loc rgLoc) (*traj.Chunk, error) {
	rg := fr.RowGroup(loc.rg)
	n := rg.NumRows()
	if n < 0 {
		return nil, loc.parquetErr("", "corrupt footer: the row group has %d rows", n)
	}
	ch := &traj.Chunk{Src: traj.Origin{File: loc.file, RowGroup: loc.rg, Row: loc.row0}}
	var err error
	intOrString := func(c *colSpec, vals *[]int64, strs *[]string) error {
		if c.conv == convString {
			*strs, err = d.strings(ctx, rg, c, n, loc, nil)
		} else {
			*vals, err = d.ints(ctx, rg, c, n, loc, nil)
		}
		return err
	}
	switch {
	case lay.site != nil:
		if err := intOrString(lay.site, &ch.SiteInt, &ch.SiteStr); err != nil {
			return nil, err
		}
	case hiveInt:
		v, err := strconv.ParseInt(lay.hiveSite, 10, 64)
		if err != nil {
			return nil, loc.parquetErr("", "internal error: hive site %q is not an integer", lay.hiveSite)
		}
		ch.SiteInt = make([]int64, n)
		for i := range ch.SiteInt {
			ch.SiteInt[i] = v
		}
	default:
		ch.SiteStr = make([]string, n)
		for i := range ch.SiteStr {
			ch.SiteStr[i] = lay.hiveSite
		}
	}
	if err := intOrString(lay.traj, &ch.TrajInt, &ch.TrajStr); err != nil {
		return nil, err
	}
	return ch, nil
}
