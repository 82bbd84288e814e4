package dataset

import (
	"fmt"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Options say how to read the data and what to hold of them. Map.Kind
// must be set; every other field has a working zero value (the default
// columns, H and A from the data, every core, 80% of memory).
type Options struct {
	// Map is the feature map. The action-block map's state columns default
	// to the data's s1, s2, ..., the other maps' as
	// features.Spec.WithDefaultState gives them; a tabular map's S to the
	// largest state + 1; quantile bins (COL:qK) are computed from every
	// row. traj.Columns.Check finds a column named for two roles.
	Map features.Spec
	// Columns names the contract's columns (traj.Columns' defaults for "").
	Columns traj.Columns
	// Horizon is H (0: the largest step) and Actions A (0: the largest
	// action + 1, or the number of labels).
	Horizon, Actions int
	// ActionLabels is the action set of a policy the data must have
	// (string labels, or integers 0..Actions-1 when nil); with
	// CheckActions the action column is checked against it before
	// anything else is read.
	ActionLabels []string
	CheckActions bool
	// Workers is the number of parallel workers (0: GOMAXPROCS); results
	// do not depend on it.
	Workers int
	// FirstStep and Nulls say how the steps are numbered and what a NULL
	// in the action, reward or a state column does.
	FirstStep traj.FirstStep
	Nulls     traj.NullPolicy
	// MaxMemory is the memory limit: a size such as 8GiB, "0" for none,
	// "" for 80% of the memory this process may use. Data estimated to
	// need more are read out of core when they can be, and refused with
	// ErrTooLarge otherwise.
	MaxMemory string
	// OutOfCore reads the data one pair of steps at a time instead of
	// holding them in memory.
	OutOfCore bool
	// InMemory, when not "", says why the caller needs the rows in memory
	// (it re-solves from held statistics, say): the data are then never
	// read out of core.
	InMemory string
	// Disclosure is the disclosure control the statistics are formed
	// under (none for the zero value).
	Disclosure solve.Disclosure
	// Note receives notes on how the data were read (steps read as
	// numbered from 0, rows a null policy removed, an automatic switch to
	// out of core); nil drops them.
	Note func(Note)
	// Progress, when not nil, returns the progress of a stage ("reading",
	// "surveying"); its Finish is called when the stage ends.
	Progress func(stage string) Progress

	// rowsOnly says that the caller reads the rows only, not the
	// statistics (WriteSorted): every map can then be read out of core.
	// heldTwice says that the caller holds the rows twice (WriteSorted
	// copies each step): the memory check counts them twice.
	rowsOnly, heldTwice bool
	// zeroStepFile names the file in which the steps were found numbered
	// from 0, noted once the data are read.
	zeroStepFile string
	// policyMap, when set, is the map of a policy evaluated through Map
	// instead of its own ([Options.UsePolicyThrough]): its state columns
	// are read beside Map's, for its decisions.
	policyMap *features.Map
	// window, when set, gives the part of the table whose statistics are
	// formed (a federated site's round needs two steps of them); the data
	// warnings are then not computed.
	window func(*traj.Table) *traj.Table
}

// Progress is told how much of a stage is done; it must be safe for
// concurrent use.
type Progress interface {
	traj.Progress
	Finish()
}

type silent struct{}

func (silent) SetTotal(int64) {}
func (silent) Add(int64)      {}
func (silent) Finish()        {}

func (o *Options) progress(stage string) Progress {
	if o.Progress == nil {
		return silent{}
	}
	return o.Progress(stage)
}

func (o *Options) note(n Note) {
	if o.Note != nil {
		o.Note(n)
	}
}

// A Note says how the data were read, without stopping the work; Kind
// says which fields are set.
type Note struct {
	Kind NoteKind
	// File is the file whose steps were found numbered from 0
	// (ZeroSteps).
	File string
	// Removed counts the rows the null policy Nulls removed at one site
	// (NullsRemoved).
	Nulls   traj.NullPolicy
	Removed traj.NullCount
	// TooLarge is why the data are read out of core (OutOfCore).
	TooLarge *TooLargeError
	// Censored counts the censored episodes written unmarked
	// (CensoredWritten).
	Censored int
}

// NoteKind is what a [Note] is about.
type NoteKind int

const (
	// ZeroSteps: the steps start at 0 in File and are read as 1..H.
	ZeroSteps NoteKind = iota
	// NullsRemoved: the null policy removed rows at a site.
	NullsRemoved
	// OutOfCore: the data do not fit in the memory limit and are read
	// out of core instead.
	OutOfCore
	// CensoredWritten: [WriteSorted] writes the rows of Censored
	// episodes cut at a NULL, without marking them, so that a read of the
	// file takes each to end at its last row.
	CensoredWritten
)

// String says what n says, in the library's terms.
func (n Note) String() string {
	switch n.Kind {
	case ZeroSteps:
		return fmt.Sprintf("steps start at 0 in %s; read as 1..H (set the first step to silence)", n.File)
	case NullsRemoved:
		return "nulls " + n.Nulls.String() + ": " + n.RemovedWords()
	case CensoredWritten:
		return fmt.Sprintf("%d censored episodes are written without a mark: a read of the file takes each to end at its last row", n.Censored)
	}
	return n.TooLarge.Finding() + "; solving out of core instead, one pair of steps at a time"
}

// RemovedWords says what a NullsRemoved note counts: "site S: R rows
// removed from E episodes with a NULL (...)".
func (n Note) RemovedWords() string {
	c := n.Removed
	verb := "dropped"
	if n.Nulls == traj.NullsTruncate {
		verb = "censored: cut"
	}
	return fmt.Sprintf("site %s: %d rows removed from %d episodes with a NULL (%d %s before the NULL, %d dropped whole)",
		c.Site, c.Rows, c.Episodes, c.Truncated, verb, c.Episodes-c.Truncated)
}

// stateSpec turns the options into the reader's state description.
func (o *Options) stateSpec() traj.StateSpec {
	if o.policyMap != nil {
		return o.unionSpec()
	}
	sp := traj.StateSpec{Columns: o.Map.StateColumns}
	switch o.Map.Kind {
	case features.Tabular:
		sp.Integer, sp.Max = true, o.Map.S
	case features.Indicator:
		sp.Integer, sp.Max = true, 3
	case features.ActionBlock:
		sp.NonzeroSum = true
	case features.Precomputed:
		sp.List = true
	}
	return sp
}

// ReadOptions are the reader's options for o, with progress p (nil for
// none).
func (o *Options) ReadOptions(p traj.Progress) traj.Options {
	return traj.Options{Columns: o.Columns, State: o.stateSpec(), Horizon: o.Horizon, Actions: o.Actions, ActionLabels: o.ActionLabels,
		Workers: o.Workers, Progress: p, FirstStep: o.FirstStep, Nulls: o.Nulls}
}

// UsePolicy sets the map, horizon and actions of o to the policy's, to
// read data the policy is evaluated on.
func (o *Options) UsePolicy(p *solve.Policy) {
	o.Map = features.Spec{Kind: p.Map.Kind, StateColumns: p.Map.StateColumns, Bins: p.Map.Bins}
	if p.Map.Kind == features.Tabular {
		o.Map.S = p.Map.S
	}
	o.Horizon, o.Actions, o.ActionLabels, o.CheckActions = p.H, p.A, p.ActionLabels, true
}
