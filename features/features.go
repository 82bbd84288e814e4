package features

import (
	"fmt"
	"math"
	"slices"
)

// Kind names a feature map.
type Kind int

const (
	// Tabular: an integer state s in 0..S-1; phi(s,a) = e_{s*A+a}; d = S*A.
	Tabular Kind = iota + 1
	// ActionBlock (paper 4.1): nonnegative state columns s, not all zero;
	// block a (coordinates a*p .. a*p+p-1) holds s/||s||_1; d = p*A.
	ActionBlock
	// Indicator (paper 4.2): an integer state in {0,1,2}; phi(0,a) = e_a,
	// phi(1,.) = e_A, phi(2,.) = e_{A+1}; d = A+2.
	Indicator
	// Precomputed: a list of A*d floats holding phi(s,a) for every action,
	// row-major by action.
	Precomputed
	// Binned: numeric columns cut at fixed points ([Bins]); the state is the
	// cell of the product of bins; phi(s,a) = e_{cell*A+a}; d = cells*A.
	Binned
	// SoftBinned: numeric columns with triangular memberships centred on
	// the cut points; phi(s,a) is the columns' average membership vector in
	// action a's block; d = A * (sum of the columns' centres).
	SoftBinned
)

var kindNames = map[Kind]string{Tabular: "tabular", ActionBlock: "action-block", Indicator: "indicator", Precomputed: "precomputed",
	Binned: "binned", SoftBinned: "soft-binned"}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind returns the Kind named s.
func ParseKind(s string) (Kind, error) {
	k, err := parseKind(s)
	if err != nil {
		return 0, fmt.Errorf("features: %w", err)
	}
	return k, nil
}

// parseKind is [ParseKind] with an error that does not name the package.
func parseKind(s string) (Kind, error) {
	for k, n := range kindNames {
		if n == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown feature map %q (want tabular, action-block, indicator, precomputed, binned or soft-binned)", s)
}

// Map is a feature map phi(s, a) onto the probability simplex in R^d. The
// zero value is not usable: set Kind, A and the kind's parameter.
type Map struct {
	Kind Kind `json:"kind"`
	// A is the number of actions.
	A int `json:"actions"`
	// S is the number of tabular states.
	S int `json:"states,omitempty"`
	// P is the number of action-block state columns.
	P int `json:"p,omitempty"`
	// D is the precomputed map's dimension.
	D int `json:"d_per_action,omitempty"`
	// StateColumns names the columns the state is read from.
	StateColumns []string `json:"state_columns"`
	// Bins holds the binned and soft-binned maps' cut points, one entry per
	// state column in the order of StateColumns.
	Bins []Bins `json:"bins,omitempty"`
}

const badMap = "features: map has an unknown kind"

// Dim returns d, the feature dimension.
func (m *Map) Dim() int {
	switch m.Kind {
	case Tabular:
		return m.S * m.A
	case ActionBlock:
		return m.P * m.A
	case Indicator:
		return m.A + 2
	case Precomputed:
		return m.D
	case Binned:
		return m.Cells() * m.A
	case SoftBinned:
		return m.centres() * m.A
	}
	panic(badMap)
}

// Width returns the number of floats in one state: 1 for tabular and
// indicator, p for action-block, A*d for precomputed, the number of
// binned columns for binned and soft-binned.
func (m *Map) Width() int {
	switch m.Kind {
	case Tabular, Indicator:
		return 1
	case ActionBlock:
		return m.P
	case Precomputed:
		return m.A * m.D
	case Binned, SoftBinned:
		return len(m.Bins)
	}
	panic(badMap)
}

// MaxNonzeros returns the largest number of nonzeros in one phi(s,a).
func (m *Map) MaxNonzeros() int {
	switch m.Kind {
	case Tabular, Indicator, Binned:
		return 1
	case ActionBlock:
		return m.P
	case Precomputed:
		return m.D
	case SoftBinned:
		return min(2*len(m.Bins), m.centres())
	}
	panic(badMap)
}

// Discrete reports whether states are integers that index a finite state
// space (tabular, indicator), and returns its size. A binned map's states
// are the measurements themselves, not cell numbers: it is not Discrete
// ([Map.Cell] gives the cell).
func (m *Map) Discrete() (int, bool) {
	switch m.Kind {
	case Tabular:
		return m.S, true
	case Indicator:
		return 3, true
	}
	return 0, false
}

// Phi writes the nonzeros of phi(state, a) to idx and val, which must have
// room for MaxNonzeros entries, and returns their count. Indices ascend.
// The state must be valid for the map (the reader checks this).
func (m *Map) Phi(state []float64, a int, idx []int32, val []float64) int {
	switch m.Kind {
	case Tabular:
		idx[0] = int32(int(state[0])*m.A + a)
		val[0] = 1
		return 1
	case Indicator:
		switch int(state[0]) {
		case 0:
			idx[0] = int32(a)
		case 1:
			idx[0] = int32(m.A)
		default:
			idx[0] = int32(m.A + 1)
		}
		val[0] = 1
		return 1
	case ActionBlock:
		sum := 0.0
		for _, v := range state[:m.P] {
			sum += v
		}
		n := 0
		for j, v := range state[:m.P] {
			if v != 0 {
				idx[n] = int32(a*m.P + j)
				val[n] = v / sum
				n++
			}
		}
		return n
	case Precomputed:
		n := 0
		for j, v := range state[a*m.D : (a+1)*m.D] {
			if v != 0 {
				idx[n] = int32(j)
				val[n] = v
				n++
			}
		}
		return n
	case Binned:
		idx[0] = int32(m.Cell(state)*m.A + a)
		val[0] = 1
		return 1
	case SoftBinned:
		return m.softPhi(state, a, idx, val)
	}
	panic(badMap)
}

// Dot returns phi(state, a)^T coef.
func (m *Map) Dot(state []float64, a int, coef []float64) float64 {
	switch m.Kind {
	case Tabular:
		return coef[int(state[0])*m.A+a]
	case Indicator:
		switch int(state[0]) {
		case 0:
			return coef[a]
		case 1:
			return coef[m.A]
		default:
			return coef[m.A+1]
		}
	case ActionBlock:
		sum := 0.0
		for _, v := range state[:m.P] {
			sum += v
		}
		dot := 0.0
		for j, v := range state[:m.P] {
			if v != 0 {
				dot += v / sum * coef[a*m.P+j]
			}
		}
		return dot
	case Precomputed:
		dot := 0.0
		for j, v := range state[a*m.D : (a+1)*m.D] {
			if v != 0 {
				dot += v * coef[j]
			}
		}
		return dot
	case Binned:
		return coef[m.Cell(state)*m.A+a]
	case SoftBinned:
		return m.softDot(state, a, coef)
	}
	panic(badMap)
}

// Blocks is a partition of the coordinates 0..d-1 such that no feature
// vector has nonzeros in two blocks: Lambda = sum phi phi^T + lambda I is
// then block-diagonal. Coordinates within a block ascend; blocks are
// ordered by their smallest coordinate.
type Blocks struct {
	// Start has one offset per block plus one: block b holds
	// Coord[Start[b]:Start[b+1]].
	Start []int32
	Coord []int32
	// Of gives each coordinate's block, Pos its position within it.
	Of, Pos []int32
}

// Len returns the number of blocks.
func (b *Blocks) Len() int { return len(b.Start) - 1 }

// Size returns the size of block i.
func (b *Blocks) Size(i int) int { return int(b.Start[i+1] - b.Start[i]) }

// Diagonal reports whether every block has one coordinate.
func (b *Blocks) Diagonal() bool { return len(b.Coord) == b.Len() }

// MaxSize returns the size of the largest block.
func (b *Blocks) MaxSize() int {
	s := 0
	for i := 0; i < b.Len(); i++ {
		s = max(s, b.Size(i))
	}
	return s
}

// NewBlocks builds Blocks from a block label per coordinate. Labels are
// renumbered so that blocks are ordered by their smallest coordinate.
func NewBlocks(label []int) Blocks {
	d := len(label)
	renum := map[int]int32{}
	of := make([]int32, d)
	for i, l := range label {
		r, ok := renum[l]
		if !ok {
			r = int32(len(renum))
			renum[l] = r
		}
		of[i] = r
	}
	nb := len(renum)
	start := make([]int32, nb+1)
	for _, r := range of {
		start[r+1]++
	}
	for b := 0; b < nb; b++ {
		start[b+1] += start[b]
	}
	coord := make([]int32, d)
	pos := make([]int32, d)
	fill := slices.Clone(start[:nb])
	for i, r := range of {
		pos[i] = fill[r] - start[r]
		coord[fill[r]] = int32(i)
		fill[r]++
	}
	return Blocks{Start: start, Coord: coord, Of: of, Pos: pos}
}

// Blocks returns the block structure the map guarantees: diagonal for
// tabular, indicator and binned, A blocks of p for action-block, A blocks
// of the sum of the columns' centres for soft-binned. For precomputed
// maps it returns one block of all coordinates; use [DiscoverBlocks] to
// find a finer one from data.
func (m *Map) Blocks() Blocks {
	d := m.Dim()
	label := make([]int, d)
	for i := range label {
		switch m.Kind {
		case ActionBlock:
			label[i] = i / m.P
		case SoftBinned:
			label[i] = i / (d / m.A)
		case Precomputed:
			label[i] = 0
		default:
			label[i] = i
		}
	}
	return NewBlocks(label)
}

// DiscoverBlocks returns the finest partition of 0..d-1 in which the
// nonzeros of every vector passed to add lie in one block. Call add for
// each feature vector's nonzero indices, then done.
func DiscoverBlocks(d int) (add func(idx []int32), done func() Blocks) {
	parent := make([]int32, d)
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(int32) int32
	find = func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	add = func(idx []int32) {
		if len(idx) < 2 {
			return
		}
		r0 := find(idx[0])
		for _, j := range idx[1:] {
			r := find(j)
			if r != r0 {
				if r < r0 {
					r, r0 = r0, r
				}
				parent[r] = r0
			}
		}
	}
	done = func() Blocks {
		label := make([]int, d)
		for i := range label {
			label[i] = int(find(int32(i)))
		}
		return NewBlocks(label)
	}
	return add, done
}

// CheckSimplex reports whether phi(state, a) lies on the simplex for every
// action, to within tol, as the paper assumes.
func (m *Map) CheckSimplex(state []float64, tol float64) error {
	idx := make([]int32, m.MaxNonzeros())
	val := make([]float64, m.MaxNonzeros())
	for a := 0; a < m.A; a++ {
		n := m.Phi(state, a, idx, val)
		s := 0.0
		for _, v := range val[:n] {
			if v < 0 {
				return fmt.Errorf("features: phi(s, %d) has a negative entry %g", a, v)
			}
			s += v
		}
		if math.Abs(s-1) > tol {
			return fmt.Errorf("features: phi(s, %d) sums to %g, not 1", a, s)
		}
	}
	return nil
}

// MarshalText writes the map's name, so JSON shows "action-block".
func (k Kind) MarshalText() ([]byte, error) {
	if s, ok := kindNames[k]; ok {
		return []byte(s), nil
	}
	return nil, fmt.Errorf("features: unknown kind %d", int(k))
}

// UnmarshalText reads a map's name.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// DotAll sets dst[a] = phi(state, a)^T coef for every action a (dst has
// length A). Each entry is computed with exactly the arithmetic of
// [Map.Dot], so the two agree bit for bit.
func (m *Map) DotAll(dst []float64, state []float64, coef []float64) {
	switch m.Kind {
	case Tabular:
		copy(dst, coef[int(state[0])*m.A:int(state[0])*m.A+m.A])
	case Indicator:
		switch int(state[0]) {
		case 0:
			copy(dst, coef[:m.A])
		case 1:
			for a := range dst {
				dst[a] = coef[m.A]
			}
		default:
			for a := range dst {
				dst[a] = coef[m.A+1]
			}
		}
	case ActionBlock:
		var buf [16]float64
		var sn []float64
		if m.P <= len(buf) {
			sn = buf[:m.P]
		} else {
			sn = make([]float64, m.P)
		}
		sum := 0.0
		for _, v := range state[:m.P] {
			sum += v
		}
		for j, v := range state[:m.P] {
			sn[j] = v / sum
		}
		for a := range dst {
			block := coef[a*m.P : (a+1)*m.P]
			dot := 0.0
			for j, v := range state[:m.P] {
				if v != 0 {
					dot += sn[j] * block[j]
				}
			}
			dst[a] = dot
		}
	case Precomputed, Binned, SoftBinned:
		for a := range dst {
			dst[a] = m.Dot(state, a, coef)
		}
	default:
		panic(badMap)
	}
}

// ActionOf returns the action whose features include feature i, or -1 for
// a feature that no single action owns (the indicator map's state
// features, a precomputed map's).
func (m *Map) ActionOf(i int) int {
	switch m.Kind {
	case Tabular, Binned:
		return i % m.A
	case ActionBlock:
		return i / m.P
	case SoftBinned:
		return i / (m.Dim() / m.A)
	case Indicator:
		if i < m.A {
			return i
		}
	}
	return -1
}
