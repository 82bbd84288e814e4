package parquetio

import (
	"fmt"
	"math"
	"strconv"

	"github.com/grmdp/grmdp/internal/hugepage"
	"github.com/grmdp/grmdp/traj"
)

// This file holds a Read in two passes (readTable, readStates): when the
// footers give each row group's place among the input's rows, the first
// pass decodes every column but the states', and workers check each row
// group's values and write them to their place in presized arrays (place),
// while what needs other row groups (site, id and label interning, the
// columns' kinds, the order of errors) stays serial and in order
// (addPlaced). traj.NewTable then builds the Table from those arrays, and
// the second pass decodes the states, checks them and writes each row's
// straight to its place in the Table (placeStates). The checks and their
// messages are those of traj.Builder.Add, in the same order.

// idKind is whether a column of ids holds integers or strings, which must
// be the same in every file.
type idKind uint8

const (
	kindUnset idKind = iota
	kindInt
	kindStr
)

// placer holds the rows of a Read in two passes until traj.NewTable takes
// them, and what the second pass needs to check the states.
type placer struct {
	opts traj.Options
	cols traj.Columns
	// statesLater says that the first pass skips the states: state is
	// then the Table's state array (nil for a list, whose width the second
	// pass learns), and the rows' rewards live in its memory until
	// NewTable has copied them. Otherwise state holds the rows' states.
	statesLater bool
	w           int

	siteKind, trajKind, actionKind idKind
	siteIDs                        map[string]int32
	siteSmall                      []int32         // integer site id -> interned site, -1 unknown (see intSite)
	siteInt                        map[int64]int32 // the other integer site ids
	siteLabels                     []string
	trajIDs                        map[string]int64
	trajLabels                     []string
	actionIDs                      map[string]int32
	actionLabels                   []string
	maxStep, maxAction             int

	site   []int32
	traj   []int64
	step   []int32
	action []int32
	reward []float64
	state  []float64
	// where each row group's rows are, for messages
	origins []traj.Origin
	ends    []int
	sources []traj.Source
}

// placed is what place found in one row group, for addPlaced: the first
// error of each column it checks (nil where none) and the maxima.
type placed struct {
	errStep, errAction, errReward, errState error
	maxStep, maxAction                      int
}

// newPlacer returns a placer for rows rows. Its arrays are made now, while
// the heap has no free spans to reuse: the runtime hands out fresh memory
// without clearing it, touched only as rows are written.
func newPlacer(opts traj.Options, rows int, statesLater bool) *placer {
	p := &placer{opts: opts, cols: opts.Columns.WithDefaults(), statesLater: statesLater, w: opts.State.Width(), maxAction: -1,
		siteIDs: map[string]int32{}, trajIDs: map[string]int64{}, actionIDs: map[string]int32{}}
	for i, l := range opts.ActionLabels {
		p.actionKind = kindStr
		p.actionIDs[l] = int32(i)
		p.actionLabels = append(p.actionLabels, l)
	}
	p.site = hugepage.Make[int32](rows)
	p.traj = hugepage.Make[int64](rows)
	p.step = hugepage.Make[int32](rows)
	p.action = hugepage.Make[int32](rows)
	switch {
	case !statesLater:
		p.reward = hugepage.Make[float64](rows)
		p.state = hugepage.Make[float64](rows * p.w)
	case p.w > 0:
		// The rewards are dead by the time the second pass writes the
		// states (NewTable has copied them): until then they hold the
		// states' memory (PERFORMANCE.md, item 51).
		p.state = hugepage.Make[float64](rows * p.w)
		p.reward = p.state[:rows:rows]
	default:
		p.reward = hugepage.Make[float64](rows)
	}
	return p
}

// slots returns the arrays of integer trajectory ids and rewards for rows
// lo..hi-1, empty with capacity hi-lo: the decoder may decode those
// columns straight into them, and place then has nothing to copy.
func (p *placer) slots(lo, hi int) (traj []int64, reward []float64) {
	return p.traj[lo:lo:hi], p.reward[lo:lo:hi]
}

// place is the part of traj.Builder.Add that needs nothing from other row
// groups: it checks the steps, integer actions, rewards and (unless they
// come later) states of c and writes them, and integer trajectory ids, to
// rows off..off+c.Len()-1. Calls for disjoint rows may run concurrently.
func (p *placer) place(c *traj.Chunk, off int) placed {
	n, w := c.Len(), p.w
	if len(c.Reward) != n || (!p.statesLater && (c.W != w || len(c.State) != n*w)) {
		panic("parquetio: chunk columns of different lengths")
	}
	var pl placed
	pl.maxStep, pl.errStep = p.steps(c, p.step[off:off+n])
	pl.maxAction = -1
	if c.ActionStr == nil {
		pl.maxAction, pl.errAction = p.intActions(c, p.action[off:off+n])
	}
	if c.TrajStr == nil && !same(p.traj[off:off+n], c.TrajInt) {
		copy(p.traj[off:off+n], c.TrajInt)
	}
	pl.errReward = p.rewards(c)
	if !same(p.reward[off:off+n], c.Reward) {
		copy(p.reward[off:off+n], c.Reward)
	}
	if !p.statesLater {
		pl.errState = p.states(c, n)
		copy(p.state[off*w:(off+n)*w], c.State)
	}
	return pl
}

// same reports whether x and y are the same array (see slots).
func same[T any](x, y []T) bool {
	return len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
}

// addPlaced completes the first pass over c, which place put at rows
// off..: it interns sites, string ids and labels, and reports the first
// error in the order traj.Builder.Add checks the columns.
func (p *placer) addPlaced(c *traj.Chunk, off int, pl placed) error {
	n := c.Len()
	if err := p.addSites(c, p.site[off:off+n]); err != nil {
		return err
	}
	if err := p.addTrajs(c, p.traj[off:off+n]); err != nil {
		return err
	}
	if pl.errStep != nil {
		return pl.errStep
	}
	p.maxStep = max(p.maxStep, pl.maxStep)
	if c.ActionStr != nil {
		if err := p.addActionLabels(c, p.action[off:off+n]); err != nil {
			return err
		}
	} else {
		if err := setKind(&p.actionKind, kindInt, c.Src, p.cols.Action); err != nil {
			return err
		}
		if pl.errAction != nil {
			return pl.errAction
		}
		p.maxAction = max(p.maxAction, pl.maxAction)
	}
	if pl.errReward != nil {
		return pl.errReward
	}
	if pl.errState != nil {
		return pl.errState
	}
	p.origins = append(p.origins, c.Src)
	p.ends = append(p.ends, off+n)
	return nil
}

// table hands the rows to traj.NewTable and returns its Table and, with
// the states later, the rows' places for the second pass. The placer keeps
// only what the second pass's messages need.
func (p *placer) table() (*traj.Table, []int32, error) {
	r := traj.Rows{Sites: p.siteLabels, IntSites: p.siteKind == kindInt, Site: p.site, Traj: p.traj, Step: p.step,
		Action: p.action, Reward: p.reward, W: p.w, State: p.state, StatesLater: p.statesLater,
		Origins: p.origins, Ends: p.ends, Sources: p.sources}
	if p.trajKind == kindStr {
		r.TrajLabels = p.trajLabels
	}
	if p.actionKind == kindStr {
		r.ActionLabels = p.actionLabels
	}
	p.site, p.traj, p.step, p.action, p.reward, p.state = nil, nil, nil, nil, nil, nil
	return traj.NewTable(r, p.opts)
}

// numActions returns A as NewTable finds it: the labels' number or the
// largest action + 1, at least Options.Actions.
func (p *placer) numActions() int {
	A := p.maxAction + 1
	if p.actionKind == kindStr {
		A = len(p.actionLabels)
	}
	return max(A, p.opts.Actions)
}

func (p *placer) rowErr(src traj.Origin, i int, col string, format string, args ...any) error {
	return &traj.RowError{File: src.File, RowGroup: src.RowGroup, Row: src.Row + int64(i), Column: col, Msg: fmt.Sprintf(format, args...), Err: ErrBadData}
}

// setKind sets *k to want, or reports that an earlier file's column held
// the other kind.
func setKind(k *idKind, want idKind, src traj.Origin, col string) error {
	if *k == kindUnset {
		*k = want
		return nil
	}
	if *k != want {
		names := map[idKind]string{kindInt: "integer", kindStr: "string"}
		return &traj.RowError{File: src.File, RowGroup: -1, Row: -1, Column: col, Msg: fmt.Sprintf("is %s here but %s in an earlier file: the files' schemas disagree", names[want], names[*k]), Err: ErrSchema}
	}
	return nil
}

// steps checks the steps of c and writes them to dst (len c.Len()). It
// returns their maximum and the first bad step's error.
func (p *placer) steps(c *traj.Chunk, dst []int32) (int, error) {
	mx, first, horizon := 0, p.opts.FirstStep, p.opts.Horizon
	for i, h := range c.Step {
		if h < 1 {
			return mx, &traj.RowError{File: c.Src.File, RowGroup: c.Src.RowGroup, Row: c.Src.Row + int64(i), Column: p.cols.Step,
				Msg: traj.StepBelowMsg(first, h), Err: traj.StepBelowErr(first, h)}
		}
		if horizon > 0 && h > int64(horizon) {
			return mx, p.rowErr(c.Src, i, p.cols.Step, "%s", traj.StepBeyondMsg(first, h, horizon))
		}
		if h > math.MaxInt16 {
			return mx, p.rowErr(c.Src, i, p.cols.Step, "step %d is implausibly large (at most %d)", h, math.MaxInt16)
		}
		dst[i] = int32(h)
		mx = max(mx, int(h))
	}
	return mx, nil
}

// intActions checks the integer actions of c and writes them to dst (len
// c.Len()). It returns their maximum (-1 for none) and the first bad
// action's error.
func (p *placer) intActions(c *traj.Chunk, dst []int32) (int, error) {
	mx, A := -1, p.opts.Actions
	for i, a := range c.ActionInt {
		if a < 0 {
			return mx, p.rowErr(c.Src, i, p.cols.Action, "action %d is negative: integer actions are 0..A-1", a)
		}
		if A > 0 && a >= int64(A) {
			return mx, p.rowErr(c.Src, i, p.cols.Action, "action %d is out of range: A = %d actions, 0..%d", a, A, A-1)
		}
		if a >= traj.MaxActions {
			return mx, p.rowErr(c.Src, i, p.cols.Action, "%s", traj.ActionLimitMsg(a))
		}
		dst[i] = int32(a)
		mx = max(mx, int(a))
	}
	return mx, nil
}

// rewards checks the rewards of c.
func (p *placer) rewards(c *traj.Chunk) error {
	for i, r := range c.Reward {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return p.rowErr(c.Src, i, p.cols.Reward, "reward is %v: rewards must be finite numbers in [0,1]", r)
		}
		if r < 0 || r > 1 {
			return p.rowErr(c.Src, i, p.cols.Reward, "reward %g is outside [0,1]: rescale rewards to [0,1] before solving", r)
		}
	}
	return nil
}

// addSites interns the sites of c and writes their ids to dst (len
// c.Len()).
func (p *placer) addSites(c *traj.Chunk, dst []int32) error {
	if c.SiteStr != nil {
		if err := setKind(&p.siteKind, kindStr, c.Src, p.cols.Site); err != nil {
			return err
		}
		for i, s := range c.SiteStr {
			dst[i] = p.internSite(s)
		}
		return nil
	}
	if err := setKind(&p.siteKind, kindInt, c.Src, p.cols.Site); err != nil {
		return err
	}
	// Rows often come in runs of one site; shuffled rows change site at
	// every row, so integer ids are looked up without formatting them
	// (intSite), and formatted only the first time.
	last, id := int64(0), int32(-1)
	for i, s := range c.SiteInt {
		if id < 0 || s != last {
			last, id = s, p.intSite(s)
		}
		dst[i] = id
	}
	return nil
}

// intSite is internSite for an integer site id: ids 0..len(siteSmall)-1
// are looked up in a slice, others in a map, each interned the first time.
func (p *placer) intSite(s int64) int32 {
	if p.siteSmall == nil {
		p.siteSmall = make([]int32, 1024)
		for i := range p.siteSmall {
			p.siteSmall[i] = -1
		}
	}
	small := s >= 0 && s < int64(len(p.siteSmall))
	if small {
		if id := p.siteSmall[s]; id >= 0 {
			return id
		}
	} else if id, ok := p.siteInt[s]; ok {
		return id
	}
	id := p.internSite(strconv.FormatInt(s, 10))
	if small {
		p.siteSmall[s] = id
	} else {
		if p.siteInt == nil {
			p.siteInt = map[int64]int32{}
		}
		p.siteInt[s] = id
	}
	return id
}

func (p *placer) internSite(s string) int32 {
	id, ok := p.siteIDs[s]
	if !ok {
		id = int32(len(p.siteLabels))
		p.siteIDs[s] = id
		p.siteLabels = append(p.siteLabels, s)
	}
	return id
}

// addTrajs checks the kind of c's trajectory ids and interns string ids
// into dst (len c.Len()); place copied integer ids.
func (p *placer) addTrajs(c *traj.Chunk, dst []int64) error {
	if c.TrajStr == nil {
		return setKind(&p.trajKind, kindInt, c.Src, p.cols.Traj)
	}
	if err := setKind(&p.trajKind, kindStr, c.Src, p.cols.Traj); err != nil {
		return err
	}
	for i, s := range c.TrajStr {
		id, ok := p.trajIDs[s]
		if !ok {
			id = int64(len(p.trajLabels))
			p.trajIDs[s] = id
			p.trajLabels = append(p.trajLabels, s)
		}
		dst[i] = id
	}
	return nil
}

// addActionLabels interns the string actions of c and writes their ids to
// dst (len c.Len()).
func (p *placer) addActionLabels(c *traj.Chunk, dst []int32) error {
	if err := setKind(&p.actionKind, kindStr, c.Src, p.cols.Action); err != nil {
		return err
	}
	fixed := p.opts.ActionLabels
	for i, s := range c.ActionStr {
		id, ok := p.actionIDs[s]
		if !ok {
			if len(fixed) > 0 {
				return p.rowErr(c.Src, i, p.cols.Action, "unknown action label %q: the policy's actions are %v", s, fixed)
			}
			if len(p.actionLabels) >= traj.MaxActions {
				return p.rowErr(c.Src, i, p.cols.Action, "%s", traj.LabelLimitMsg(s))
			}
			id = int32(len(p.actionLabels))
			p.actionIDs[s] = id
			p.actionLabels = append(p.actionLabels, s)
		}
		dst[i] = id
	}
	return nil
}
