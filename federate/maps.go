package federate

// This file is the feature-map and settings side of a job: which maps and
// settings run in rounds, the map a site's data must have, the precomputed
// map's blocks (the join of the sites' partitions) and the stationary
// variant's Grams (every step's, in every message).

import (
	"context"
	"fmt"
	"slices"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// checkMap validates the job's feature map: its sizes, state columns and,
// for the binned maps, explicit cut points.
func checkMap(m *features.Map) error {
	switch m.Kind {
	case features.Tabular:
		if m.S < 1 {
			return fmt.Errorf("federate: the tabular map needs the number of states S")
		}
	case features.Indicator:
	case features.ActionBlock:
		if m.P < 1 || len(m.StateColumns) != m.P {
			return fmt.Errorf("federate: the action-block map needs its p state columns, got p = %d and columns %v", m.P, m.StateColumns)
		}
	case features.Precomputed:
		if m.D < 1 || len(m.StateColumns) != 1 {
			return fmt.Errorf("federate: the precomputed map needs its one list column and the number of features per action D")
		}
	case features.Binned, features.SoftBinned:
		for _, b := range m.Bins {
			if b.Quantiles > 0 {
				return fmt.Errorf("federate: the bins of column %s are quantile cut points, type-7 quantiles over every site's rows, which no sum of one site's rows gives: the map needs explicit cut points", b.Column)
			}
		}
		if err := features.CheckBins(m.Kind, m.Bins); err != nil {
			return fmt.Errorf("federate: %v", err)
		}
		cols := make([]string, len(m.Bins))
		for i, b := range m.Bins {
			cols[i] = b.Column
		}
		if !slices.Equal(cols, m.StateColumns) {
			return fmt.Errorf("federate: the %s map's state columns %v are not its bins' columns %v", m.Kind, m.StateColumns, cols)
		}
	default:
		return fmt.Errorf("federate: unknown feature map %v", m.Kind)
	}
	return nil
}

// sameMap reports whether two maps are the same map: kind, sizes, state
// columns and cut points.
func sameMap(a, b *features.Map) bool {
	if a.Kind != b.Kind || a.A != b.A || a.S != b.S || a.P != b.P || a.D != b.D || !slices.Equal(a.StateColumns, b.StateColumns) || len(a.Bins) != len(b.Bins) {
		return false
	}
	for i := range a.Bins {
		if a.Bins[i].Column != b.Bins[i].Column || !slices.Equal(a.Bins[i].Cuts, b.Bins[i].Cuts) {
			return false
		}
	}
	return true
}

// blocksOf returns the blocks that labels (a block number per feature)
// describe.
func blocksOf(labels []int32) features.Blocks {
	l := make([]int, len(labels))
	for i, v := range labels {
		l[i] = int(v)
	}
	return features.NewBlocks(l)
}

// refines reports whether every block of fine lies inside one block of
// coarse.
func refines(fine, coarse *features.Blocks) bool {
	if len(fine.Of) != len(coarse.Of) {
		return false
	}
	for b := 0; b < fine.Len(); b++ {
		coords := fine.Coord[fine.Start[b]:fine.Start[b+1]]
		for _, c := range coords[1:] {
			if coarse.Of[c] != coarse.Of[coords[0]] {
				return false
			}
		}
	}
	return true
}

// joinBlocks returns the finest partition every site's blocks refine: the
// partition a central solve finds from every row at once, since a row's
// features lie in one block of its own site's partition
// ([solve.BlocksFor], [features.DiscoverBlocks]).
func joinBlocks(d int, sites []features.Blocks) features.Blocks {
	add, done := features.DiscoverBlocks(d)
	for _, b := range sites {
		for i := 0; i < b.Len(); i++ {
			add(b.Coord[b.Start[i]:b.Start[i+1]])
		}
	}
	return done()
}

// jobLayout returns the Gram layout of round r's fold: the map's own
// blocks, or for a precomputed map the state's joint blocks (after round
// 0) or the join of the round-0 messages' partitions.
func jobLayout(j *Job, s *State, msgs []*Message) (*solve.Layout, error) {
	if j.Map.Kind != features.Precomputed {
		return layoutOf(j), nil
	}
	if s.Round > 0 {
		if len(s.Blocks) != j.Map.Dim() {
			return nil, refusef("state: the precomputed map's blocks label %d features, want %d", len(s.Blocks), j.Map.Dim())
		}
		l := solve.NewLayout(blocksOf(s.Blocks))
		return &l, nil
	}
	var parts []features.Blocks
	for _, m := range msgs {
		// A message for another job or round, or of another size, is
		// refused by Fold's checks; it joins nothing.
		if m.JobID != j.ID || m.Round != s.Round || len(m.Blocks) != j.Map.Dim() {
			continue
		}
		parts = append(parts, blocksOf(m.Blocks))
	}
	l := solve.NewLayout(joinBlocks(j.Map.Dim(), parts))
	return &l, nil
}

// labelsOf returns the block number of every feature of l.
func labelsOf(l *solve.Layout) []int32 { return slices.Clone(l.Blocks.Of) }

// msgLayout returns the layout a message's Gram is packed in: its own
// blocks for a precomputed map (which must refine the job's), the job's
// otherwise.
func msgLayout(name string, j *Job, m *Message, joint *solve.Layout) (*solve.Layout, error) {
	if j.Map.Kind != features.Precomputed {
		return joint, nil
	}
	if len(m.Blocks) != j.Map.Dim() {
		return nil, refusef("%s: the message labels the blocks of %d features, the job's map has %d", name, len(m.Blocks), j.Map.Dim())
	}
	b := blocksOf(m.Blocks)
	if !refines(&b, &joint.Blocks) {
		return nil, refusef("%s: site %q's features appear together across the job's blocks: its data changed since round 0", name, m.Site)
	}
	l := solve.NewLayout(b)
	return &l, nil
}

// gramSize is the length of a message's Gram vector: one step's packed
// Gram, or every step's for a stationary job.
func gramSize(j *Job, l *solve.Layout) int {
	if j.Stationary {
		return j.H * l.Size()
	}
	return l.Size()
}

// repack copies a Gram packed in layout from into layout to, which from
// refines: the entries between two of from's blocks are zero, as no row
// has features in both.
func repack(from, to *solve.Layout, packed []float64) []float64 {
	if from == to {
		return packed
	}
	out := make([]float64, to.Size())
	fb, tb := &from.Blocks, &to.Blocks
	for b := 0; b < fb.Len(); b++ {
		coords := fb.Coord[fb.Start[b]:fb.Start[b+1]]
		for r, cr := range coords {
			for c, cc := range coords[:r+1] {
				x, y := int(tb.Pos[cr]), int(tb.Pos[cc])
				if x < y {
					x, y = y, x
				}
				out[to.Off[tb.Of[cr]]+x*(x+1)/2+y] = packed[from.Off[b]+r*(r+1)/2+c]
			}
		}
	}
	return out
}

// gramsOf returns a message's Grams in the joint layout: the round's step's
// (one), or every step's for a stationary job (H, in step order).
func gramsOf(j *Job, m *Message, from, joint *solve.Layout) []solve.Gram {
	if !j.Stationary {
		return []solve.Gram{{N: m.StepRows, Packed: repack(from, joint, m.Gram)}}
	}
	n := from.Size()
	out := make([]solve.Gram, j.H)
	for h := range out {
		out[h] = solve.Gram{Packed: repack(from, joint, m.Gram[h*n:(h+1)*n])}
		if h < len(m.GramRows) {
			out[h].N = m.GramRows[h]
		}
	}
	return out
}

// siteStats returns the statistics a site's message is formed from: st,
// or for a precomputed map st's rows again under the blocks the round
// needs: in round 0 the site's own partition ([solve.BlocksFor]), after it
// the job's joint blocks, which the site's own partition must refine.
func siteStats(ctx context.Context, j *Job, s *State, st *solve.Stats) (*solve.Stats, error) {
	if j.Map.Kind != features.Precomputed {
		return st, nil
	}
	want := solve.BlocksFor(st.Table, &st.Map)
	if s.Round > 0 {
		if len(s.Blocks) != j.Map.Dim() {
			return nil, refusef("the job's state lacks the precomputed map's blocks")
		}
		joint := blocksOf(s.Blocks)
		if !refines(&want, &joint) {
			return nil, refusef("the site's rows have features together across the job's blocks (found in round 0): its data changed since round 0")
		}
		want = joint
	}
	if slices.Equal(st.Layout.Blocks.Of, want.Of) {
		return st, nil
	}
	return solve.NewStatsDisclosed(ctx, st.Table, st.Map, want, 0, st.Disclosure())
}

// siteGrams returns the Gram vector of a site's message and the rows
// behind each step's Gram for a stationary job (nil otherwise).
func siteGrams(ctx context.Context, j *Job, st *solve.Stats, h int) ([]float64, []float64, error) {
	if !j.Stationary {
		grams, err := st.StepGrams(ctx, h)
		if err != nil {
			return nil, nil, err
		}
		return grams[0].Packed, nil, nil
	}
	var packed, rows []float64
	for hh := 1; hh <= j.H; hh++ {
		grams, err := st.StepGrams(ctx, hh)
		if err != nil {
			return nil, nil, err
		}
		packed = append(packed, grams[0].Packed...)
		rows = append(rows, grams[0].N)
	}
	return packed, rows, nil
}
