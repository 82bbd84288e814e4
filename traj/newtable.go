package traj

import (
	"fmt"
	"math"

	"github.com/grmdp/grmdp/internal/workers"
)

// Rows are checked rows by column, in the order read, for [NewTable]: row
// i has site Site[i], trajectory Traj[i], step Step[i], action Action[i],
// reward Reward[i] and state State[i*W:(i+1)*W]. Every value must already
// satisfy the contract (as [Builder.Add] checks it); NewTable checks what
// needs the whole input.
type Rows struct {
	// Sites holds the site labels; Site[i] indexes it. With IntSites the
	// labels are decimal integers (ordered numerically), otherwise they
	// order lexically.
	Sites    []string
	IntSites bool
	Site     []int32
	// TrajLabels, when not nil, holds string trajectory ids, which Traj
	// indexes; otherwise Traj holds the integer ids.
	TrajLabels []string
	Traj       []int64
	// Step holds the steps, from 1 (Options.FirstStep's shift applied).
	Step []int32
	// ActionLabels, when not nil, holds string actions, which Action
	// indexes; with Options.ActionLabels set they begin with those, in
	// that order. Otherwise Action holds integer actions from 0.
	ActionLabels []string
	Action       []int32
	Reward       []float64
	// W is the width of a row's state.
	W     int
	State []float64
	// StatesLater says that the states are not given: State is then the
	// Table's state array (W values for each row in the Table's order, or
	// nil), which NewTable neither reads nor writes; the caller fills it
	// afterwards at the places NewTable returns. Reward may share its
	// memory.
	StatesLater bool
	// Origins and Ends locate the rows for error messages: rows
	// Ends[k-1]..Ends[k]-1 (from 0 for k = 0) are the consecutive rows of
	// a file from Origins[k].
	Origins []Origin
	Ends    []int
	// Sources lists the input files, for the Table's provenance.
	Sources []Source
}

// NewTable builds the Table of rows r, read with opts, as [Builder.Build]
// does: it orders sites and actions canonically, sorts and links the rows,
// and reports duplicate (site, traj, step) rows, gaps inside an episode
// and, for a precomputed map's list state given in r.State, lists whose
// length or block sums do not fit A actions. Its Table equals the one a
// Builder given the same rows would build.
//
// NewTable owns r's arrays from the call on: it may reuse their memory for
// the Table. With r.StatesLater it returns places, which gives each row's
// index (in the order read) among the Table's rows, step after step: its
// state belongs at r.State[places[i]*W:]; places is nil otherwise.
//
// It panics if r's columns differ in length or a site, action label or
// step is out of range.
func NewTable(r Rows, opts Options) (t *Table, places []int32, err error) {
	n := len(r.Step)
	if len(r.Site) != n || len(r.Traj) != n || len(r.Action) != n || len(r.Reward) != n ||
		(!r.StatesLater && len(r.State) != n*r.W) || len(r.Origins) != len(r.Ends) {
		panic("traj: NewTable: columns of different lengths")
	}
	b := NewBuilder(opts)
	b.owned, b.statesLater = true, r.StatesLater
	b.w, b.wKnown = r.W, true
	b.site, b.traj, b.step, b.action, b.reward = r.Site, r.Traj, r.Step, r.Action, r.Reward
	if r.StatesLater {
		b.tableState = r.State
	} else {
		b.state = r.State
	}
	b.siteKind, b.siteLabels = kindStr, r.Sites
	if r.IntSites {
		b.siteKind = kindInt
	}
	b.trajKind, b.trajLabels = kindInt, r.TrajLabels
	if r.TrajLabels != nil {
		b.trajKind = kindStr
	}
	if r.ActionLabels != nil {
		b.actionKind, b.actionLabels = kindStr, r.ActionLabels
	} else {
		b.actionKind = kindInt
	}
	b.chunks, b.chunkEnds = r.Origins, r.Ends
	b.chunkOffs = make([][]int32, len(r.Ends))
	b.sources = r.Sources
	b.maxStep, b.maxAction = r.ranges(opts.Horizon)
	t, perm, bounds, err := b.build()
	if err != nil || !r.StatesLater {
		return t, nil, err
	}
	return t, b.places(perm, bounds), nil
}

// ranges returns the largest step and the largest integer action (-1 for
// none, or for labels), and panics on a value out of range (a step beyond
// a fixed horizon among them).
func (r *Rows) ranges(horizon int) (maxStep, maxAction int) {
	maxAction = -1
	for i, h := range r.Step {
		if h < 1 || h > math.MaxInt16 || (horizon > 0 && int(h) > horizon) {
			panic(fmt.Sprintf("traj: NewTable: step %d at row %d", h, i))
		}
		maxStep = max(maxStep, int(h))
	}
	for i, s := range r.Site {
		if s < 0 || int(s) >= len(r.Sites) {
			panic(fmt.Sprintf("traj: NewTable: site %d at row %d, with %d sites", s, i, len(r.Sites)))
		}
	}
	for i, a := range r.Action {
		if a < 0 || (r.ActionLabels != nil && int(a) >= len(r.ActionLabels)) {
			panic(fmt.Sprintf("traj: NewTable: action %d at row %d", a, i))
		}
		maxAction = max(maxAction, int(a))
	}
	if r.ActionLabels != nil {
		maxAction = -1
	}
	return maxStep, maxAction
}

// places returns the inverse of perm, Build's order (step h's rows are
// perm[bounds[h-1]:bounds[h]]), in the memory of the rows' actions, which
// the Table has copied.
func (b *Builder) places(perm []int32, bounds []int) []int32 {
	inv := b.action[:len(perm)]
	b.site, b.traj, b.step, b.action, b.reward, b.state, b.tableState = nil, nil, nil, nil, nil, nil, nil
	w := workers.Or(b.opts.Workers)
	if !visitByBlocks(perm, bounds, w, func(j int, r int32) { inv[r] = int32(j) }) {
		parallelRanges(len(perm), w, func(_, lo, hi int) {
			for j := lo; j < hi; j++ {
				inv[perm[j]] = int32(j)
			}
		})
	}
	return inv
}

// SetListWidth sets a list state's width before any chunk is added (Add
// sets it from the first chunk with rows otherwise).
func (b *Builder) SetListWidth(w int) { b.w, b.wKnown = w, true }
