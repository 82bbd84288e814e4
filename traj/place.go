package traj

import (
	"github.com/grmdp/grmdp/internal/hugepage"
	"github.com/grmdp/grmdp/internal/workers"
)

// This file holds what a reader needs to fill a Builder in parallel and in
// two passes (see [Builder.Presize]): io/parquetio's Read decodes every
// column but the states' in a first pass, writing each row group's rows at
// their place (Place, AddPlaced), builds the Table, and then decodes the
// states and writes each row's straight to its place in the Table
// (StatePlaces, PlaceStates).

// Width returns the number of floats per row's state: the spec's, or for a
// list the length set by the first chunk with rows (or SetListWidth).
func (b *Builder) Width() int { return b.w }

// Slots returns the Builder's trajectory-id and reward arrays for rows
// lo..hi-1, empty with capacity hi-lo, after Presize: a reader may decode
// those columns straight into them, and Place then has nothing to copy.
func (b *Builder) Slots(lo, hi int) (traj []int64, reward []float64) {
	return b.traj[lo:lo:hi], b.reward[lo:lo:hi]
}

// StatePlaces is called after Build on a Builder presized with stateLater:
// it returns inv, which maps a row in the order Add saw it to its place in
// the Table's order, and the Table's state array, for PlaceStates. It drops
// the Builder's rows, which are in the Table now, so that the collector
// can free them.
func (b *Builder) StatePlaces() (inv []int32, all []float64) {
	// inv, the inverse of Build's order, reuses the action column, which
	// Build copied into the Table.
	perm := b.perm
	inv = b.action[:len(perm)] // lent: 24% of peak (PERFORMANCE.md, item 51)
	b.action, b.perm = nil, nil
	w := workers.Or(b.opts.Workers)
	if !visitByBlocks(perm, b.permBounds, w, func(j int, r int32) { inv[r] = int32(j) }) {
		parallelRanges(len(perm), w, func(_, lo, hi int) {
			for j := lo; j < hi; j++ {
				inv[perm[j]] = int32(j)
			}
		})
	}
	b.permBounds = nil
	all, b.tableState = b.tableState, nil
	b.site, b.traj, b.action, b.reward = nil, nil, nil, nil
	return inv, all
}

// SetListWidth sets a list state's width, from the first row group, which
// Add would have seen first; with stateLater the first pass saw no state.
func (b *Builder) SetListWidth(w int) { b.w, b.wKnown = w, true }

// CheckListWidth checks the list state's width against the number of
// actions, as Build does, naming the input's first row, and returns A.
func (b *Builder) CheckListWidth() (A int, err error) {
	A = b.canonical().A
	return A, b.checkPhiWidth(A, func() (Origin, int) { return b.origin(0) })
}

// ListStates gives t, built without knowing its list state's width, its
// state arrays (Width() values per row, not filled) and returns them.
func (b *Builder) ListStates(t *Table) []float64 {
	t.W = b.w
	all := hugepage.Make[float64](t.Rows * b.w)
	lo := 0
	for h := range t.Steps {
		st := &t.Steps[h]
		hi := lo + st.Len()
		st.State = all[lo*b.w : hi*b.w : hi*b.w]
		lo = hi
	}
	return all
}

// PutStates checks the states of the n rows in c.State (c.Src and the
// chunk's selection locate them for errors), which are the rows off..
// off+n-1 in the order Add saw them, against the spec, and writes them to
// their places in all (see PlaceStates). It does not check a list's block
// sums.
func (b *Builder) PutStates(c *Chunk, n, off int, inv []int32, all []float64) error {
	if _, err := b.states(c, n); err != nil {
		return err
	}
	scatterRows(all, c.State, inv[off:off+n], b.w)
	return nil
}
