package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"github.com/urfave/cli/v2/altsrc"
	"golang.org/x/term"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
)

// withConfig lets every flag of cmd be set from a YAML file given with
// --config, so a batch job is one reviewed file. Flags on the command line
// win over the file.
func withConfig(cmd *cli.Command) *cli.Command {
	var flags []cli.Flag
	// Required flags are checked after the config file is read, so that the
	// file can set them too.
	var required []string
	for _, f := range cmd.Flags {
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
			required = append(required, f.Names()[0])
			if sf, ok := f.(*cli.StringFlag); ok {
				sf.Required = false
			}
		}
		switch f := f.(type) {
		case *cli.StringFlag:
			flags = append(flags, altsrc.NewStringFlag(f))
		case *cli.Float64Flag:
			flags = append(flags, altsrc.NewFloat64Flag(f))
		case *cli.IntFlag:
			flags = append(flags, altsrc.NewIntFlag(f))
		case *cli.Uint64Flag:
			flags = append(flags, altsrc.NewUint64Flag(f))
		case *cli.BoolFlag:
			flags = append(flags, altsrc.NewBoolFlag(f))
		default:
			flags = append(flags, f)
		}
	}
	flags = append(flags, &cli.StringFlag{Name: "config", Usage: "read flag values from this YAML `FILE` (command-line flags win)"})
	cmd.Flags = flags
	load := altsrc.InitInputSourceWithContext(flags, altsrc.NewYamlSourceFromFlagFunc("config"))
	cmd.Before = func(c *cli.Context) error {
		if c.String("config") != "" {
			if err := load(c); err != nil {
				return usagef("--config %s: %v", c.String("config"), err)
			}
		}
		for _, name := range required {
			if c.String(name) == "" {
				return usagef("--%s is required (on the command line or in --config)", name)
			}
		}
		return nil
	}
	return cmd
}

// settingsUsed records every flag's value as the command saw it.
func settingsUsed(c *cli.Context) map[string]string {
	out := map[string]string{"command": c.Command.Name}
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if name == "help" {
			continue
		}
		v := c.Value(name)
		switch v := v.(type) {
		case cli.StringSlice:
			out[name] = strings.Join(v.Value(), ",")
		default:
			out[name] = fmt.Sprint(v)
		}
	}
	out["args"] = strings.Join(c.Args().Slice(), " ")
	return out
}

// dataFlags are the flags that say how to read the trajectory contract.
func dataFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "features", Value: "action-block", Usage: "feature map: tabular, action-block, indicator or precomputed"},
		&cli.StringFlag{Name: "state", Usage: "state `COLS`, comma separated (default: state for tabular and indicator, s1..sp for action-block, phi for precomputed)"},
		&cli.StringFlag{Name: "site-col", Value: "site", Usage: "site column"},
		&cli.StringFlag{Name: "traj-col", Value: "traj", Usage: "trajectory column"},
		&cli.StringFlag{Name: "step-col", Value: "step", Usage: "step column"},
		&cli.StringFlag{Name: "action-col", Value: "action", Usage: "action column"},
		&cli.StringFlag{Name: "reward-col", Value: "reward", Usage: "reward column"},
		&cli.IntFlag{Name: "horizon", Usage: "horizon H (default: the largest step)"},
		&cli.IntFlag{Name: "actions", Usage: "number of actions A (default: largest action + 1, or the number of labels)"},
		&cli.IntFlag{Name: "num-states", Usage: "number of tabular states S (default: largest state + 1)"},
		&cli.IntFlag{Name: "workers", Usage: "parallel workers (default: all cores); results do not depend on it"},
	}
}

// dataOptions is what dataFlags say.
type dataOptions struct {
	Kind      features.Kind
	State     []string
	Columns   parquetio.Columns
	Horizon   int
	Actions   int
	NumStates int
	Workers   int
}

func parseDataOptions(c *cli.Context) (dataOptions, error) {
	var o dataOptions
	k, err := features.ParseKind(c.String("features"))
	if err != nil {
		return o, usagef("--features: %v", strings.TrimPrefix(err.Error(), "features: "))
	}
	o.Kind = k
	if s := c.String("state"); s != "" {
		for _, col := range strings.Split(s, ",") {
			col = strings.TrimSpace(col)
			if col == "" {
				return o, usagef("--state %q has an empty column name", s)
			}
			o.State = append(o.State, col)
		}
	}
	o.Columns = parquetio.Columns{Site: c.String("site-col"), Traj: c.String("traj-col"), Step: c.String("step-col"), Action: c.String("action-col"), Reward: c.String("reward-col")}
	o.Horizon, o.Actions, o.NumStates, o.Workers = c.Int("horizon"), c.Int("actions"), c.Int("num-states"), c.Int("workers")
	for _, f := range []struct {
		name string
		v    int
	}{{"horizon", o.Horizon}, {"actions", o.Actions}, {"num-states", o.NumStates}, {"workers", o.Workers}} {
		if f.v < 0 {
			return o, usagef("--%s must not be negative", f.name)
		}
	}
	switch k {
	case features.Tabular, features.Indicator:
		if o.State == nil {
			o.State = []string{"state"}
		}
		if len(o.State) != 1 {
			return o, usagef("--state: the %s map reads one integer column, got %d", k, len(o.State))
		}
	case features.Precomputed:
		if o.State == nil {
			o.State = []string{"phi"}
		}
		if len(o.State) != 1 {
			return o, usagef("--state: the precomputed map reads one list column, got %d", len(o.State))
		}
	}
	return o, nil
}

// stateSpec turns the options into the reader's state description.
func (o dataOptions) stateSpec() parquetio.StateSpec {
	sp := parquetio.StateSpec{Columns: o.State}
	switch o.Kind {
	case features.Tabular:
		sp.Integer, sp.Max = true, o.NumStates
	case features.Indicator:
		sp.Integer, sp.Max = true, 3
	case features.ActionBlock:
		sp.NonzeroSum = true
	case features.Precomputed:
		sp.List = true
	}
	return sp
}

func (o dataOptions) readOptions(progress parquetio.Progress) parquetio.Options {
	return parquetio.Options{Columns: o.Columns, State: o.stateSpec(), Horizon: o.Horizon, Actions: o.Actions, Workers: o.Workers, Progress: progress}
}

// dataset is a table read from Parquet with its feature map and statistics.
type dataset struct {
	Table *parquetio.Table
	Map   features.Map
	Stats *solve.Stats
}

// loadData reads paths and builds the per-(site, step) statistics.
func loadData(ctx context.Context, c *cli.Context, o dataOptions, paths []string) (*dataset, error) {
	if len(paths) == 0 {
		return nil, usagef("no DATA given: name one or more Parquet files, directories or globs")
	}
	if o.Kind == features.ActionBlock && o.State == nil {
		cols, err := parquetio.PrefixedColumns(paths, "s")
		if err != nil {
			return nil, err
		}
		if len(cols) == 0 {
			return nil, badInputf("%s: no state columns s1, s2, ... found for the action-block map: name them with --state", paths[0])
		}
		o.State = cols
	}
	bar := newBar(c.App.ErrWriter, "reading")
	t, err := parquetio.Read(ctx, paths, o.readOptions(bar))
	bar.finish()
	if err != nil {
		return nil, err
	}
	m, err := mapFor(o, t)
	if err != nil {
		return nil, err
	}
	blocks := m.Blocks()
	if m.Kind == features.Precomputed {
		blocks = discoverBlocks(t, &m)
	}
	st, err := solve.NewStats(ctx, t, m, blocks, o.Workers)
	if err != nil {
		return nil, err
	}
	return &dataset{Table: t, Map: m, Stats: st}, nil
}

// mapFor completes the feature map from the table: A, S, p, d.
func mapFor(o dataOptions, t *parquetio.Table) (features.Map, error) {
	m := features.Map{Kind: o.Kind, A: t.A, StateColumns: o.State}
	switch o.Kind {
	case features.Tabular:
		m.S = o.NumStates
		if m.S == 0 {
			for h := range t.Steps {
				for _, v := range t.Steps[h].State {
					m.S = max(m.S, int(v)+1)
				}
			}
		}
	case features.ActionBlock:
		m.P = t.W
	case features.Precomputed:
		m.D = t.W / t.A
	}
	return m, nil
}

func discoverBlocks(t *parquetio.Table, m *features.Map) features.Blocks {
	add, done := features.DiscoverBlocks(m.Dim())
	idx := make([]int32, m.MaxNonzeros())
	val := make([]float64, m.MaxNonzeros())
	for h := range t.Steps {
		st := &t.Steps[h]
		for j := 0; j < st.Len(); j++ {
			n := m.Phi(st.State[j*t.W:(j+1)*t.W], int(st.Action[j]), idx, val)
			add(idx[:n])
		}
	}
	return done()
}

// bar is a progress bar on a terminal's stderr, silent otherwise.
type bar struct{ pb *progressbar.ProgressBar }

func newBar(w io.Writer, what string) *bar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return &bar{}
	}
	return &bar{pb: progressbar.NewOptions64(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(100_000_000), progressbar.OptionClearOnFinish())}
}

func (b *bar) SetTotal(n int64) {
	if b.pb != nil {
		b.pb.ChangeMax64(n)
	}
}

func (b *bar) Add(n int64) {
	if b.pb != nil {
		_ = b.pb.Add64(n)
	}
}

func (b *bar) finish() {
	if b.pb != nil {
		_ = b.pb.Finish()
	}
}

// sourcesOf converts the table's sources for a policy.
func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var _ = slices.Sort[[]string]
