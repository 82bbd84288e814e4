package parquetio

import (
	"math"
	"strconv"

	"github.com/grmdp/grmdp/internal/hugepage"
	"github.com/grmdp/grmdp/traj"
)

// This file holds the state checks of a Read in two passes: the first
// pass's, when it keeps the states (placer.place), and the second pass's,
// which writes each row's state to its place in the Table.

func (p *placer) stateCol(j int) string {
	sp := p.opts.State
	if sp.List || len(sp.Columns) == 0 {
		if len(sp.Columns) > 0 {
			return sp.Columns[0]
		}
		return "state"
	}
	return sp.Columns[j]
}

// states checks the state values of the n rows of c, of width c.W,
// against the spec, and returns the first bad value's error.
func (p *placer) states(c *traj.Chunk, n int) error {
	sp := p.opts.State
	w := c.W
	for i := 0; i < n; i++ {
		row := c.State[i*w : (i+1)*w]
		sum := 0.0
		for j, v := range row {
			col := p.stateCol(j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				if sp.List {
					return p.rowErr(c.Src, i, col, "element %d is %v: feature values must be finite", j, v)
				}
				return p.rowErr(c.Src, i, col, "state value is %v: states must be finite", v)
			}
			if sp.Integer {
				if v != math.Trunc(v) {
					return p.rowErr(c.Src, i, col, "state %g is not an integer", v)
				}
				if v < 0 {
					return p.rowErr(c.Src, i, col, "state %g is negative: integer states are 0..S-1", v)
				}
				if sp.Max > 0 && v >= float64(sp.Max) {
					return p.rowErr(c.Src, i, col, "state %g is out of range 0..%d", v, sp.Max-1)
				}
			}
			if (sp.NonzeroSum || sp.List) && v < 0 {
				if sp.List {
					return p.rowErr(c.Src, i, col, "element %d is %g: features must be nonnegative (on the simplex)", j, v)
				}
				return p.rowErr(c.Src, i, col, "state value %g is negative: the action-block map needs nonnegative states", v)
			}
			sum += v
		}
		if sp.NonzeroSum && sum == 0 {
			return p.rowErr(c.Src, i, p.stateCol(0), "state is all zero in %v: the action-block map needs a nonzero state", sp.Columns)
		}
	}
	return nil
}

// checkListWidth checks the list state's width p.w, which the second pass
// read from the first row group, against A actions, naming the input's
// first row.
func (p *placer) checkListWidth(A int) error {
	w, D := p.w, p.opts.State.D
	if w%A != 0 || w == 0 || (D > 0 && w != A*D) {
		want := "a multiple of A = " + strconv.Itoa(A)
		if D > 0 {
			want = strconv.Itoa(A*D) + " (A*d)"
		}
		return p.rowErr(p.origins[0], 0, p.stateCol(0), "phi has length %d, want %s: phi holds phi(s,a) for every action, row-major by action", w, want)
	}
	return nil
}

// listStates gives t, built without knowing its list state's width, its
// state arrays (p.w values per row, not filled) and returns them.
func (p *placer) listStates(t *traj.Table) []float64 {
	t.W = p.w
	all := hugepage.Make[float64](t.Rows * p.w)
	lo := 0
	for h := range t.Steps {
		st := &t.Steps[h]
		hi := lo + st.Len()
		st.State = all[lo*p.w : hi*p.w : hi*p.w]
		lo = hi
	}
	return all
}

// phiOff returns the first action whose block of row (A blocks) does not
// sum to 1, and its sum.
func phiOff(row []float64, A int) (a int, sum float64, bad bool) {
	d := len(row) / A
	for a := 0; a < A; a++ {
		s := 0.0
		for _, v := range row[a*d : (a+1)*d] {
			s += v
		}
		if math.Abs(s-1) > 1e-6 {
			return a, s, true
		}
	}
	return 0, 0, false
}

// placeStates checks the states of n rows, decoded in the second pass
// into c (c.State only), which are the rows off..off+n-1 in the order
// read, and writes them to their places in all (nil: check only); places
// comes from traj.NewTable. Calls for disjoint rows may run concurrently.
//
// For a list state, whose width p.w the first row group set, a row group
// of another width is an error, and with A > 0 every row's A blocks must
// each sum to 1: the first row that does not gives phiErr, which ranks
// after every row group's error, so placeStates goes on.
func (p *placer) placeStates(c *traj.Chunk, n, off int, places []int32, all []float64, A int) (err, phiErr error) {
	w := p.w
	if p.opts.State.List {
		if c.W != w && n > 0 {
			return p.rowErr(c.Src, 0, p.stateCol(0), "list of length %d, but earlier rows have length %d", c.W, w), nil
		}
	} else if c.W != w {
		panic("parquetio: chunk state width differs from the spec")
	}
	if len(c.State) != n*w {
		panic("parquetio: chunk state length differs from rows*width")
	}
	if err := p.states(c, n); err != nil {
		return err, nil
	}
	if A > 0 {
		for i := range n {
			if a, s, bad := phiOff(c.State[i*w:(i+1)*w], A); bad {
				phiErr = p.rowErr(c.Src, i, p.stateCol(0), "phi(s, a=%d) sums to %.9g, not 1: features must lie on the simplex", a, s)
				break
			}
		}
	}
	if all != nil {
		scatterRows(all, c.State, places[off:off+n], w)
	}
	return nil, phiErr
}

// scatterRows writes row k of src, w values, to row places[k] of all, for
// every k. The common widths get loops without a copy call per row.
func scatterRows(all, src []float64, places []int32, w int) {
	switch w {
	case 1:
		for k, v := range src[:len(places)] {
			all[places[k]] = v
		}
	case 2:
		for k, i := range places {
			j := 2 * int(i)
			from, to := src[2*k:2*k+2:2*k+2], all[j:j+2:j+2]
			to[0], to[1] = from[0], from[1]
		}
	case 3:
		for k, i := range places {
			j := 3 * int(i)
			from, to := src[3*k:3*k+3:3*k+3], all[j:j+3:j+3]
			to[0], to[1], to[2] = from[0], from[1], from[2]
		}
	case 4:
		for k, i := range places {
			j := 4 * int(i)
			from, to := src[4*k:4*k+4:4*k+4], all[j:j+4:j+4]
			to[0], to[1], to[2], to[3] = from[0], from[1], from[2], from[3]
		}
	default:
		for k, i := range places {
			j := int(i)
			copy(all[j*w:(j+1)*w], src[k*w:(k+1)*w])
		}
	}
}
