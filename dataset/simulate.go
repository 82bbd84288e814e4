package dataset

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/traj"
)

// Simulation writing lives here rather than in package sim, which stays
// free of Parquet (and of arrow-go): the simulated rows are data like any
// other, written by the reader's own writer.

// SimulationFiles names what [WriteSimulation] writes and how.
type SimulationFiles struct {
	// Data is the Parquet file of every site's rows.
	Data string
	// Model, if not "", receives the true model as JSON (sim.WriteModel).
	Model string
	// SplitPrefix, if not "", also writes each site's rows to
	// [SplitPath](SplitPrefix, site).
	SplitPrefix string
	// RowGroupRows is the rows per Parquet row group (0: the writer's
	// default).
	RowGroupRows int
	// MaxMemory refuses, before sampling, a simulation whose rows would not
	// fit in it (a [TooLargeError] with the remedy FewerRows); its zero
	// value sets no limit.
	MaxMemory Limit
	// Prepare, when not nil, is called with the path of the data file, the
	// model file and each site file before anything is written (to
	// create its directory, say): the data and model files' first.
	Prepare func(path string) error
	// WriteTable writes a table's rows (nil: parquetio.WriteTrajectories).
	WriteTable func(path string, t *traj.Table, o parquetio.WriteOptions) error
}

// Simulated is what [WriteSimulation] wrote.
type Simulated struct {
	// Sites, H and A are the sampled table's; Rows counts the rows
	// written (NULL rows included).
	Sites []string
	Rows  int
	H, A  int
	// Flags are the flags beyond --features and --state that read the
	// data as drawn (the binned map's --bins, the model's --nulls), each
	// with a leading space ("" for none).
	Flags string
	// Split are the site files, in site order.
	Split []SiteFile
}

// SiteFile is one site's file of a simulation split by site.
type SiteFile struct {
	Path, Site         string
	Trajectories, Rows int
}

// SplitPath is the file of site's rows under the split prefix: the folder
// prefix+site, one per site.
func SplitPath(prefix, site string) string {
	return filepath.Join(prefix+site, "data.parquet")
}

// memSimulateFactor scales the read model for a simulation, which holds the
// sampled chunks, the built table and the writer's buffers: measured
// 5.6 GiB peak for the trap scenario with 1000 sites (23.3M rows, W = 3),
// 0.95 GiB for the benchmark with 4M rows.
const memSimulateFactor = 1.5

// checkSimulationMemory refuses a simulation whose rows (at most
// sum N_k * H) would not fit in limit.
func checkSimulationMemory(limit Limit, m sim.Model) error {
	if limit.Bytes <= 0 {
		return nil
	}
	var trajectories int64
	for _, n := range m.Trajectories() {
		trajectories += int64(n)
	}
	rows := trajectories * int64(m.Horizon())
	fm := m.Map()
	need := float64(parquetio.EstimateMemoryHeldTwice(rows, fm.Width(), fm.Kind == features.Precomputed)) * memSimulateFactor
	if need <= float64(limit.Bytes) {
		return nil
	}
	return &TooLargeError{What: fmt.Sprintf("the %s scenario with %d sites, %d trajectories and H = %d gives up to %d rows, which need about %s of memory",
		m.Scenario(), len(m.Trajectories()), trajectories, m.Horizon(), rows, FormatSize(int64(min(need, math.MaxInt64/2)))), Limit: limit.Name, Remedy: FewerRows}
}

// WriteSimulation samples m from seed and writes the data (and the model,
// and each site's rows, as f asks): all of them, or, when one cannot be
// written or ctx is cancelled, none. A site file that would be the data or
// the model file is an [OptionError] on SplitPrefix.
func WriteSimulation(ctx context.Context, m sim.Model, seed uint64, f SimulationFiles) (*Simulated, error) {
	if err := prepareOutputs(f.Prepare, f.Data, f.Model); err != nil {
		return nil, err
	}
	if err := checkSimulationMemory(f.MaxMemory, m); err != nil {
		return nil, err
	}
	t, err := m.Sample(seed)
	if err != nil {
		return nil, err
	}
	res := &Simulated{Sites: t.Sites, Rows: t.Rows, H: t.H, A: t.A}
	for _, b := range m.Map().Bins {
		res.Flags += " --bins " + b.String()
	}
	if res.Split, err = siteFiles(m, t, f); err != nil {
		return nil, err
	}
	opts := m.Options()
	wo := parquetio.WriteOptions{StateColumns: opts.State.Columns, List: opts.State.List, IntSites: true, RowGroupRows: f.RowGroupRows}
	// A model whose data have NULLs (clinical) writes its rows as drawn,
	// NULLs included; t is what its Options read back.
	var rows []*traj.Chunk
	if opts.Nulls != traj.NullsError {
		if rows, err = m.SampleRows(seed); err != nil {
			return nil, err
		}
		wo.NullNaN = true
		res.Flags += " --nulls " + opts.Nulls.String()
		countRows(res, rows)
	}
	if err := writeSimulationFiles(ctx, m, t, rows, f, res.Split, wo); err != nil {
		return nil, err
	}
	return res, nil
}

// prepareOutputs calls prepare (when not nil) on each path that is not
// empty, in order, stopping at the first error.
func prepareOutputs(prepare func(string) error, paths ...string) error {
	for _, p := range paths {
		if prepare != nil && p != "" {
			if err := prepare(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// siteFiles gives the file of each site's rows of t when f asks for them
// (nil otherwise), preparing each in turn; a site file that would be the
// data or the model file is an [OptionError] on SplitPrefix.
func siteFiles(m sim.Model, t *traj.Table, f SimulationFiles) ([]SiteFile, error) {
	if f.SplitPrefix == "" {
		return nil, nil
	}
	var split []SiteFile
	for k, site := range t.Sites {
		p := SplitPath(f.SplitPrefix, site)
		if filepath.Clean(p) == filepath.Clean(f.Data) || (f.Model != "" && filepath.Clean(p) == filepath.Clean(f.Model)) {
			return nil, optionErr("SplitPrefix", f.SplitPrefix, "writes site %s's rows to %s, which is also an output", site, p)
		}
		if err := prepareOutputs(f.Prepare, p); err != nil {
			return nil, err
		}
		split = append(split, SiteFile{Path: p, Site: site, Trajectories: m.Trajectories()[k], Rows: t.Site(k).Rows})
	}
	return split, nil
}

// countRows sets res's row counts (in all and of each site file) to
// those of rows, one chunk a site.
func countRows(res *Simulated, rows []*traj.Chunk) {
	res.Rows = 0
	for k, c := range rows {
		res.Rows += c.Len()
		if res.Split != nil {
			res.Split[k].Rows = c.Len()
		}
	}
}

// writeSimulationFiles writes the data (rows when not nil, else t), the
// model (when f names one) and each site's file of split, staged: all of
// them, or, when one cannot be written or ctx is cancelled, none.
func writeSimulationFiles(ctx context.Context, m sim.Model, t *traj.Table, rows []*traj.Chunk, f SimulationFiles, split []SiteFile, wo parquetio.WriteOptions) error {
	writeTable := f.WriteTable
	if writeTable == nil {
		writeTable = parquetio.WriteTrajectories
	}
	var out fileio.Staged
	defer out.Abort()
	write := func(path string, fn func(tmp string) error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		tmp, err := out.Add(path)
		if err != nil {
			return err
		}
		return fn(tmp)
	}
	if err := write(f.Data, func(tmp string) error {
		if rows != nil {
			return parquetio.WriteChunks(tmp, rows, wo)
		}
		return writeTable(tmp, t, wo)
	}); err != nil {
		return err
	}
	if f.Model != "" {
		if err := write(f.Model, func(tmp string) error {
			return fileio.WriteAtomic(tmp, func(w io.Writer) error { return sim.WriteModel(w, m) })
		}); err != nil {
			return err
		}
	}
	for k, s := range split {
		if err := write(s.Path, func(tmp string) error {
			if rows != nil {
				return parquetio.WriteChunks(tmp, rows[k:k+1], wo)
			}
			return writeTable(tmp, t.Site(k), wo)
		}); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return out.Commit()
}
