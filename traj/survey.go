package traj

import (
	"math"
	"slices"
)

// Summary is what a survey of an input (a Builder made by
// [NewSurveyBuilder]) learned without keeping its rows, for reading the
// input again a window of steps at a time ([NewWindowBuilder]). Besides the
// counts below it holds the key of every trajectory (its step-1 row's traj
// value), sorted per site, so that a window numbers trajectories as a whole
// read does: 8 bytes per trajectory for integer ids, the label's bytes plus
// 8 for string ids. A Summary is not changed by the windows read with it.
type Summary struct {
	// Sites holds the site labels in canonical order, exactly as Build's
	// Table.Sites would.
	Sites []string
	// Trajectories holds, per site, the number of trajectories (the rows
	// at step 1: every trajectory starts at step 1).
	Trajectories []int
	// Actions holds the sorted action labels when the action column holds
	// strings (as Table.Actions), else nil.
	Actions []string
	// A, H and W are as Build's Table would have them: A honours
	// Options.Actions and Options.ActionLabels, H honours Options.Horizon,
	// W is the width of a row's state.
	A, H, W int
	// Rows is the total number of rows of the input.
	Rows int
	// Sources lists the inputs, as Table.Sources.
	Sources []Source
	// ZeroStepFile is as Table.ZeroStepFile.
	ZeroStepFile string
	// CellRows[h-1][k] is the number of rows of site k at step h.
	CellRows [][]int
	// MaxState is the largest state value seen for an integer StateSpec
	// (-1 otherwise), from which callers infer S for tabular maps as they
	// would from Build's Table.
	MaxState float64

	siteKind kind
	// trajs holds every site's trajectory keys, from which a window
	// numbers trajectories as Build does.
	trajs *trajIndex
}

// NewSurveyBuilder returns a Builder that validates every row added to it
// as Add does (same errors, naming the same rows) but keeps no rows: only
// the counts per (site, step) and the trajectories' keys. [Builder.Summarize]
// then returns what it learned.
//
// A survey detects every error Build detects except two that need the rows
// of whole trajectories: duplicate (site, traj, step) rows and gaps inside
// an episode, which the windows report. (The precomputed map's checks that
// Build makes once A is known, phi's length and each block's sum,
// Summarize makes, with Build's message and row.)
func NewSurveyBuilder(opts Options) *Builder {
	b := NewBuilder(opts)
	b.survey = &surveyState{}
	return b
}

// Summarize returns what a survey Builder learned, with Rows left to the
// caller (the number of rows the inputs hold). It makes the precomputed
// map's checks that Build would.
func (b *Builder) Summarize() (*Summary, error) {
	cn, err := b.finishSurvey()
	if err != nil {
		return nil, err
	}
	s := &Summary{
		Sites: cn.sites, Actions: cn.actions, A: cn.A, H: cn.H, W: b.w,
		Sources: b.sources, MaxState: b.maxState, siteKind: b.siteKind,
	}
	K := len(cn.sites)
	s.trajs = b.survey.index(cn.siteRank, K, b.trajKind == kindStr, b.opts.Workers)
	s.CellRows = make([][]int, cn.H)
	for h := range s.CellRows {
		s.CellRows[h] = make([]int, K)
	}
	for id, row := range b.survey.cells {
		k := cn.siteRank[id]
		for h, n := range row {
			s.CellRows[h][k] = n
		}
	}
	s.Trajectories = make([]int, K)
	if cn.H > 0 {
		copy(s.Trajectories, s.CellRows[0])
	}
	return s, nil
}

// NewWindowBuilder returns a Builder for the rows at steps lo..hi (1 <= lo
// <= hi <= s.H) of the input s summarizes, read with opts (the survey's).
// Its Table has s's Sites (all of them, in s's order, even those without
// rows in the window), Actions, A, H, W and Sources; Rows counts the
// window's rows; steps outside lo..hi hold no rows (SiteStart all zeros).
// Within the window the Table is exactly what Build gives for those steps
// on the whole input: the same rows in the same order with the same values
// and trajectory ordinals (looked up in s's keys), and the same Next links
// from step h to h+1 for lo <= h < hi; rows at step hi have Next = -1.
// Rows at step lo need no predecessor, gaps are checked for lo < h <= hi,
// and a site that s does not know is an error. Callers add only the rows
// at steps lo..hi ([Chunk.KeepSteps]). Progress is not reported.
func NewWindowBuilder(opts Options, s *Summary, lo, hi int) *Builder {
	opts.Progress = nil
	opts.Horizon = s.H
	if s.Actions != nil {
		opts.ActionLabels = s.Actions
	} else {
		opts.Actions = s.A
	}
	b := NewBuilder(opts)
	b.window, b.lo, b.hi, b.trajs = true, lo, hi, s.trajs
	b.siteKind = s.siteKind
	for _, site := range s.Sites {
		b.internSite(site)
	}
	b.fixedSites = true
	if opts.State.List {
		b.w, b.wKnown = s.W, true
	}
	for _, src := range s.Sources {
		b.AddSource(src)
	}
	rows := 0
	for h := lo; h <= hi; h++ {
		for _, n := range s.CellRows[h-1] {
			rows += n
		}
	}
	b.Reserve(rows)
	return b
}

// KeepSteps drops the rows of c whose step is outside lo..hi, in place,
// recording the kept rows' offsets, so that errors about them still name
// their rows. c must hold fewer than 2^31 rows (it panics otherwise: a
// reader checks this first).
func (c *Chunk) KeepSteps(lo, hi int) {
	n := c.Len()
	keep := -1 // first row to drop
	for i, h := range c.Step {
		if h < int64(lo) || h > int64(hi) {
			keep = i
			break
		}
	}
	if keep < 0 {
		return
	}
	if n > math.MaxInt32 {
		panic("traj: KeepSteps on a chunk of 2^31 rows or more")
	}
	idx := make([]int32, 0, n-1)
	for i := range keep {
		idx = append(idx, int32(i))
	}
	for i := keep + 1; i < n; i++ {
		if h := c.Step[i]; h >= int64(lo) && h <= int64(hi) {
			idx = append(idx, int32(i))
		}
	}
	c.SiteInt = pickRows(c.SiteInt, idx, 1)
	c.SiteStr = pickRows(c.SiteStr, idx, 1)
	c.TrajInt = pickRows(c.TrajInt, idx, 1)
	c.TrajStr = pickRows(c.TrajStr, idx, 1)
	c.ActionInt = pickRows(c.ActionInt, idx, 1)
	c.ActionStr = pickRows(c.ActionStr, idx, 1)
	c.Step = pickRows(c.Step, idx, 1)
	c.Reward = pickRows(c.Reward, idx, 1)
	c.State = pickRows(c.State, idx, c.W)
	if c.offs != nil {
		for j, i := range idx {
			idx[j] = c.offs[i]
		}
	}
	c.offs = slices.Clip(idx)
}

// pickRows keeps the rows idx (ascending) of s, w values per row, in place.
// A nil s stays nil.
func pickRows[T any](s []T, idx []int32, w int) []T {
	if s == nil {
		return nil
	}
	if w == 1 {
		for j, i := range idx {
			s[j] = s[i]
		}
		return s[:len(idx)]
	}
	for j, i := range idx {
		copy(s[j*w:(j+1)*w], s[int(i)*w:(int(i)+1)*w])
	}
	return s[:len(idx)*w]
}

// surveyState is what a survey keeps instead of rows.
type surveyState struct {
	// cells[id][h-1] counts the rows of interned site id at step h.
	cells [][]int
	// keys[id] collects the trajectory keys of interned site id's rows at
	// step 1, for the Summary's trajectory index.
	keys []keyBuf
	// The input's first row, which a wrong phi length names.
	first    Origin
	firstRow int
	seen     bool
	// The precomputed map's block sums, checked for every number of
	// actions A the list length allows (A is known only at the end): live
	// holds the A whose blocks summed to 1 in every row so far, faults the
	// first row that did not for the others.
	phiInit bool
	live    []int
	faults  map[int]phiFault
}

type phiFault struct {
	src    Origin
	row, a int
	sum    float64
}

// add counts the rows of c, which Add has validated and appended to b's
// site, step and action slices, and truncates those slices.
func (sv *surveyState) add(b *Builder, c *Chunk) {
	n := c.Len()
	if n > 0 && !sv.seen {
		sv.seen, sv.first, sv.firstRow = true, c.Src, c.at(0)
	}
	site, step := b.site[len(b.site)-n:], b.step[len(b.step)-n:]
	for i := range n {
		k, h := int(site[i]), int(step[i])
		for k >= len(sv.cells) {
			sv.cells = append(sv.cells, nil)
		}
		row := sv.cells[k]
		if h > len(row) {
			row = append(row, make([]int, h-len(row))...)
			sv.cells[k] = row
		}
		row[h-1]++
	}
	sv.collectKeys(c, site, step)
	if b.opts.State.List {
		sv.phi(b, c)
	}
	b.site, b.step, b.action = b.site[:0], b.step[:0], b.action[:0]
}

func (sv *surveyState) phi(b *Builder, c *Chunk) {
	w, n := b.w, c.Len()
	if n == 0 || w == 0 {
		return
	}
	if !sv.phiInit {
		sv.phiInit = true
		sv.faults = map[int]phiFault{}
		D := b.opts.State.D
		for A := 1; A <= w; A++ {
			if w%A == 0 && (D <= 0 || w == A*D) {
				sv.live = append(sv.live, A)
			}
		}
	}
	for i := 0; i < n && len(sv.live) > 0; i++ {
		row := c.State[i*w : (i+1)*w]
		for j := 0; j < len(sv.live); {
			A := sv.live[j]
			if a, s, bad := phiOff(row, A); bad {
				sv.faults[A] = phiFault{src: c.Src, row: c.at(i), a: a, sum: s}
				sv.live = slices.Delete(sv.live, j, j+1)
				continue
			}
			j++
		}
	}
}

// finishSurvey derives what Build would (sites, actions, A, H) and makes
// the checks Build makes before sorting: the precomputed map's length and
// block sums.
func (b *Builder) finishSurvey() (canonical, error) {
	cn := b.canonical()
	sv := b.survey
	if b.opts.State.List && sv.seen {
		if err := b.checkPhiWidth(cn.A, func() (Origin, int) { return sv.first, sv.firstRow }); err != nil {
			return cn, err
		}
		if f, ok := sv.faults[cn.A]; ok {
			return cn, b.phiSumErr(f.src, f.row, f.a, f.sum)
		}
	}
	return cn, nil
}
