package traj

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"unsafe"

	"github.com/grmdp/grmdp/internal/hugepage"
	"github.com/grmdp/grmdp/internal/workers"
)

// Table is the trajectory contract held in memory, organised for the
// backward recursion: rows are grouped by step, and within a step sorted by
// site, then trajectory key. Every slice is owned by the Table.
type Table struct {
	// Sites holds the site labels in canonical order: numeric order when the
	// site column is an integer column, lexical order otherwise. Site
	// indices elsewhere refer to this slice.
	Sites []string
	// Trajectories holds, per site, the number of trajectories with at
	// least one row.
	Trajectories []int
	// Actions holds the action labels (sorted) when the action column holds
	// strings; it is nil when actions are integers.
	Actions []string
	// A is the number of actions; H is the horizon (largest step).
	A, H int
	// W is the width of one row's state vector in Step.State.
	W int
	// Steps[h-1] holds the rows at step h.
	Steps []Step
	// Sources lists the inputs the table came from, in the order read.
	Sources []Source
	// Rows is the total number of rows.
	Rows int
	// ZeroStepFile, when set, names the file in which a reader found step
	// 0 under StepsDetect: the steps were read as numbered from 0.
	ZeroStepFile string
	// Nulls counts what the null policy removed, per site (nil when it
	// removed nothing).
	Nulls []NullCount
	// Censored, when not nil, marks the censored trajectories by ordinal
	// (Step.Traj): episodes that NullsTruncate cut before a NULL, whose
	// return is unknown. The last kept row of such an episode has no
	// successor (Next = -1) but is not a terminal: its successor was not
	// observed. The Builder gives that row weight 0 (Step.Weight), so that
	// it stands for no transition and enters no regression, while the
	// episode's earlier rows, whose successors are observed, remain
	// transitions. Estimators of an episode's return exclude censored
	// trajectories (see [Table.CensoredCount]).
	Censored []bool
}

// IsCensored reports whether trajectory ordinal i is censored.
func (t *Table) IsCensored(i int32) bool {
	return t.Censored != nil && i >= 0 && int(i) < len(t.Censored) && t.Censored[i]
}

// CensoredCount returns the number of censored trajectories of each site
// (nil when none is censored).
func (t *Table) CensoredCount() []int {
	if t.Censored == nil || len(t.Steps) == 0 {
		return nil
	}
	out := make([]int, len(t.Sites))
	st := &t.Steps[0]
	for k := range len(st.SiteStart) - 1 {
		for j := st.SiteStart[k]; j < st.SiteStart[k+1]; j++ {
			if t.IsCensored(st.Traj[j]) {
				out[k]++
			}
		}
	}
	return out
}

// Step holds the rows at one step, sorted by (site, trajectory key).
type Step struct {
	// SiteStart has len(Sites)+1 offsets: the rows of site k are
	// SiteStart[k]..SiteStart[k+1]-1.
	SiteStart []int32
	// Traj is the global ordinal of the row's trajectory: trajectories are
	// numbered 0.. in (site, trajectory key) order, the sites in the order
	// of Table.Sites, so that a trajectory's ordinal is its row's index at
	// step 1. A table of a step window ([NewWindowBuilder]) numbers them the
	// same way, as if the whole input had been read; there, a row whose
	// trajectory has no row at step 1 (a gap before the window) has
	// Traj = -1.
	Traj   []int32
	Action []int32
	Reward []float64
	// State holds W values per row.
	State []float64
	// Next is the index of the same trajectory's row at step h+1 in
	// Steps[h], or -1 when the episode ended.
	Next []int32
	// Weight, when not nil, gives each row a multiplicity: a row of weight n
	// stands for n transitions with the same state, action and next state
	// and the row's Reward as their mean reward. Tables read from Parquet
	// have nil weights (every row counts once); simulators use weights to
	// hold millions of trajectories as counts.
	Weight []float64
}

// Len returns the number of rows at the step.
func (s *Step) Len() int { return len(s.Reward) }

// Site returns the site index of row i.
func (s *Step) Site(i int) int {
	k, _ := slices.BinarySearchFunc(s.SiteStart[1:], int32(i), func(e, t int32) int {
		if e <= t {
			return -1
		}
		return 1
	})
	return k
}

// Source describes one input file.
type Source struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	// Fingerprint is the SHA-256 of the file's size and Parquet footer, hex
	// encoded: it changes whenever the file's content changes, and costs no
	// full read.
	Fingerprint string `json:"fingerprint"`
	Rows        int64  `json:"rows"`
}

// StateSpec says how the state columns are read and which values the
// feature map accepts. It is a plain description so that this package need
// not know the feature maps.
type StateSpec struct {
	// Columns names the state columns: scalar numeric columns, or a single
	// list<float> column when List is set.
	Columns []string
	// List says that Columns[0] is a list column of A*D floats (the
	// precomputed feature map): A blocks of D, each on the simplex.
	List bool
	// D is the list's block length for List; 0 infers it from the first row
	// and the number of actions.
	D int
	// Integer requires integral values (tabular, indicator).
	Integer bool
	// Max, when positive, is the exclusive upper bound of an integer state
	// (S for tabular, 3 for indicator). A zero Max with Integer infers the
	// bound from the data.
	Max int
	// NonzeroSum requires nonnegative values, not all zero, in each row
	// (action-block).
	NonzeroSum bool
}

// Width returns the number of floats per row the spec produces, or 0 when it
// depends on the data (List).
func (s StateSpec) Width() int {
	if s.List {
		return 0
	}
	return len(s.Columns)
}

// Columns names the contract columns of the input.
type Columns struct {
	Site, Traj, Step, Action, Reward string
}

// DefaultColumns are the contract's default column names.
var DefaultColumns = Columns{Site: "site", Traj: "traj", Step: "step", Action: "action", Reward: "reward"}

// WithDefaults returns c with its empty names replaced by DefaultColumns'.
func (c Columns) WithDefaults() Columns {
	d := DefaultColumns
	if c.Site != "" {
		d.Site = c.Site
	}
	if c.Traj != "" {
		d.Traj = c.Traj
	}
	if c.Step != "" {
		d.Step = c.Step
	}
	if c.Action != "" {
		d.Action = c.Action
	}
	if c.Reward != "" {
		d.Reward = c.Reward
	}
	return d
}

// MaxActions is the largest number of actions A a table holds: integer
// actions are codes 0..MaxActions-1, and at most MaxActions distinct text
// labels are read. Every per-action quantity (features, statistics, the
// tables inspect prints) grows with A, so a code far above the others (a
// stray 8388614 among 0..3) is refused at its row rather than sizing them.
const MaxActions = 1 << 12

// ActionLimitMsg is the message for integer action a above the codes a
// table holds.
func ActionLimitMsg(a int64) string {
	return fmt.Sprintf("action %d is above the largest action code grmdp reads, %d: integer actions are codes 0..A-1 with A at most %d; recode the column to consecutive codes (or write the treatments as text labels)", a, MaxActions-1, MaxActions)
}

// LabelLimitMsg is the message for the action label that would be distinct
// label MaxActions+1.
func LabelLimitMsg(label string) string {
	return fmt.Sprintf("action label %q is distinct label %d: grmdp reads at most %d actions; is the action column the right one (--action-col)?", label, MaxActions+1, MaxActions)
}

// Options configures reading and building a Table.
type Options struct {
	Columns Columns
	State   StateSpec
	// Horizon, when positive, fixes H: steps above it are errors. Zero takes
	// the largest step in the data.
	Horizon int
	// Actions, when positive, fixes A: integer actions must lie in 0..A-1.
	// Zero takes the largest action + 1 (or the number of labels).
	Actions int
	// ActionLabels, when set, fixes the string action labels and their
	// order (from a policy given to apply); a label outside it is an error.
	ActionLabels []string
	// Workers bounds the parallel decode and Build's parallel sweeps; 0
	// means GOMAXPROCS.
	Workers int
	// ComparisonSort makes Build sort the rows by comparisons instead of
	// by (step, site) buckets: the same Table by the general path, which
	// tests compare with the bucket sort.
	ComparisonSort bool
	// OnePass makes a reader that would place row groups in parallel and
	// read the states in a second pass (io/parquetio's Read) add every
	// chunk serially with the states instead: the same Table by the
	// general path, which tests compare with the parallel one.
	OnePass bool
	// Progress receives row counts as a reader decodes them (io/parquetio's
	// Read reports each row twice when it reads in two passes); nil is
	// silent.
	Progress Progress
	// FirstStep says how the data number steps (StepsFrom1 by default).
	// Readers add FirstStep.Shift() to every step as they decode it; a
	// Builder is given the shifted steps and uses FirstStep only to name
	// bad steps as the data number them.
	FirstStep FirstStep
	// Nulls says what a reader does with NULLs in the action, reward and
	// state columns (NullsError by default).
	Nulls NullPolicy
}

// Progress receives progress counts. Implementations must be safe for
// concurrent use.
type Progress interface {
	SetTotal(n int64)
	Add(n int64)
}

// Chunk is a batch of decoded rows from one source, in the order read. Only
// one of each pair of alternatives (SiteInt or SiteStr, ...) is set.
type Chunk struct {
	Src Origin
	// The site, traj and action columns come either as integers or strings.
	SiteInt   []int64
	SiteStr   []string
	TrajInt   []int64
	TrajStr   []string
	ActionInt []int64
	ActionStr []string
	Step      []int64
	Reward    []float64
	// State holds W floats per row; for a List spec the width is the list
	// length (checked equal across rows by the reader).
	State []float64
	W     int
	// Missing, when not nil, marks the rows with a NULL in the action,
	// reward or a state column (whose values there are placeholders); a
	// reader sets it under a null policy other than NullsError and
	// applies DropMissing before the Builder sees the chunk.
	Missing []bool
	// Censored, when not nil, marks the last kept row of each episode
	// that NullsTruncate cut (DropMissing sets it): the Builder marks the
	// row's trajectory censored (Table.Censored).
	Censored []bool
	// offs, when not nil, gives each row's index relative to Src.Row: the
	// chunk holds a selection of its row group's rows (a step window).
	// Nil means the rows are consecutive from Src.Row.
	offs []int32
}

// Len returns the number of rows in the chunk.
func (c *Chunk) Len() int { return len(c.Step) }

// at returns the index of row i relative to c.Src.Row.
func (c *Chunk) at(i int) int {
	if c.offs == nil {
		return i
	}
	return int(c.offs[i])
}

// Origin locates the first row of a chunk: its file, row group, and the
// index of the row within the file (0-based).
type Origin struct {
	File     string
	RowGroup int
	Row      int64
}

// Builder assembles a Table from chunks, validating every value. Chunks
// must be added in a fixed order (by file, then row group) for error
// messages to be deterministic; the Table itself does not depend on the
// order of rows or chunks.
type Builder struct {
	opts Options
	cols Columns

	siteKind, trajKind, actionKind kind
	siteIDs                        map[string]int32
	siteSmall                      []int32         // integer site id -> site, -1 unknown (see intSite)
	siteInt                        map[int64]int32 // the other integer site ids
	siteLabels                     []string
	trajIDs                        map[string]int64
	trajLabels                     []string
	actionIDs                      map[string]int32
	actionLabels                   []string

	site   []int32
	traj   []int64
	step   []int32
	action []int32
	reward []float64
	state  []float64
	w      int
	// where each row came from, for messages found only after sorting
	chunks    []Origin
	chunkEnds []int
	chunkOffs [][]int32 // per chunk, its Chunk.offs

	// survey, when set, makes Add validate and count rows without keeping
	// them (see NewSurveyBuilder).
	survey *surveyState
	// window, when set, builds the Table of steps lo..hi only (see
	// NewWindowBuilder): rows at step lo need no predecessor.
	window bool
	lo, hi int
	// trajs, for a window, numbers its first step's trajectories.
	trajs *trajIndex
	// fixedSites makes a site that is not already interned an error.
	fixedSites bool
	wKnown     bool // a list's width is set (by the first chunk with rows, or SetListWidth)
	// owned, set by NewTable, means the row arrays were handed over:
	// Build may reuse their memory for the Table's columns once it no
	// longer needs them.
	owned bool
	// statesLater, set by NewTable, means the rows' states are not given:
	// the Table's state array is tableState, which Build slices into steps
	// but neither reads nor writes.
	statesLater bool
	tableState  []float64
	// sorted holds, after a counting sort, the trajectory ids of the rows
	// in sortRows' order (Build's sweeps read them in sequence).
	sorted sortedIDs

	maxStep   int
	maxAction int
	maxState  float64
	sources   []Source
	// censored holds the indices (in the order added) of the rows that
	// end a censored episode (Chunk.Censored).
	censored []int32
}

type kind uint8

const (
	kindUnset kind = iota
	kindInt
	kindStr
)

// NewBuilder returns an empty Builder for opts.
func NewBuilder(opts Options) *Builder {
	b := &Builder{opts: opts, cols: opts.Columns.WithDefaults(), w: opts.State.Width(), maxAction: -1, maxState: -1}
	b.siteIDs = map[string]int32{}
	b.trajIDs = map[string]int64{}
	b.actionIDs = map[string]int32{}
	if len(opts.ActionLabels) > 0 {
		b.actionKind = kindStr
		for i, l := range opts.ActionLabels {
			b.actionIDs[l] = int32(i)
			b.actionLabels = append(b.actionLabels, l)
		}
	}
	return b
}

// AddSource records an input file for provenance.
func (b *Builder) AddSource(s Source) { b.sources = append(b.sources, s) }

func (b *Builder) rowErr(src Origin, i int, col string, format string, args ...any) error {
	return &RowError{File: src.File, RowGroup: src.RowGroup, Row: src.Row + int64(i), Column: col, Msg: fmt.Sprintf(format, args...), Err: ErrBadData}
}

// stepErr is the error for a step h (after the shift) below 1 at row i of
// c.
func (b *Builder) stepErr(c *Chunk, i int, h int64) error {
	return &RowError{File: c.Src.File, RowGroup: c.Src.RowGroup, Row: c.Src.Row + int64(c.at(i)), Column: b.cols.Step,
		Msg: StepBelowMsg(b.opts.FirstStep, h), Err: StepBelowErr(b.opts.FirstStep, h)}
}

// StepBeyondMsg is the message for a step h (as read, after the shift of
// first) beyond the horizon H, naming the step as the data number it.
func StepBeyondMsg(first FirstStep, h int64, H int) string {
	if first == StepsFrom0 {
		return fmt.Sprintf("step %d (read as %d, the steps numbered from 0) is beyond the horizon H = %d", h-1, h, H)
	}
	return fmt.Sprintf("step %d is beyond the horizon H = %d", h, H)
}

// StepBelowMsg is the message for a step h (as read, after the shift of
// first) below 1, naming the step as the data number it.
func StepBelowMsg(first FirstStep, h int64) string {
	if first == StepsFrom0 {
		return fmt.Sprintf("step %d is below 0: steps numbered from 0 are 0..H-1", h-1)
	}
	return fmt.Sprintf("step %d is below 1: steps are numbered 1..H", h)
}

// StepBelowErr is the sentinel a [RowError] for a step h (as read, after
// the shift of first) below 1 wraps: [ErrStepZero] for a step 0 with the
// steps numbered from 1 (StepsFrom1 or StepsDetect), [ErrBadData]
// otherwise.
func StepBelowErr(first FirstStep, h int64) error {
	if h == 0 && first != StepsFrom0 {
		return ErrStepZero
	}
	return ErrBadData
}

func setKind(k *kind, want kind, src Origin, col string) error {
	if *k == kindUnset {
		*k = want
		return nil
	}
	if *k != want {
		names := map[kind]string{kindInt: "integer", kindStr: "string"}
		return &RowError{File: src.File, RowGroup: -1, Row: -1, Column: col, Msg: fmt.Sprintf("is %s here but %s in an earlier file: the files' schemas disagree", names[want], names[*k]), Err: ErrSchema}
	}
	return nil
}

// steps checks the steps of c and writes them to dst (len c.Len()). It
// returns their maximum and the first bad step's error.
func (b *Builder) steps(c *Chunk, dst []int32) (int, error) {
	mx := 0
	for i, h := range c.Step {
		if h < 1 {
			return mx, b.stepErr(c, i, h)
		}
		if b.opts.Horizon > 0 && h > int64(b.opts.Horizon) {
			return mx, b.rowErr(c.Src, c.at(i), b.cols.Step, "%s", StepBeyondMsg(b.opts.FirstStep, h, b.opts.Horizon))
		}
		if h > math.MaxInt16 {
			return mx, b.rowErr(c.Src, c.at(i), b.cols.Step, "step %d is implausibly large (at most %d)", h, math.MaxInt16)
		}
		dst[i] = int32(h)
		if int(h) > mx {
			mx = int(h)
		}
	}
	return mx, nil
}

// intActions checks the integer actions of c and writes them to dst (len
// c.Len()). It returns their maximum (-1 for none) and the first bad
// action's error.
func (b *Builder) intActions(c *Chunk, dst []int32) (int, error) {
	mx := -1
	for i, a := range c.ActionInt {
		if a < 0 {
			return mx, b.rowErr(c.Src, c.at(i), b.cols.Action, "action %d is negative: integer actions are 0..A-1", a)
		}
		if b.opts.Actions > 0 && a >= int64(b.opts.Actions) {
			return mx, b.rowErr(c.Src, c.at(i), b.cols.Action, "action %d is out of range: A = %d actions, 0..%d", a, b.opts.Actions, b.opts.Actions-1)
		}
		if a >= MaxActions {
			return mx, b.rowErr(c.Src, c.at(i), b.cols.Action, "%s", ActionLimitMsg(a))
		}
		dst[i] = int32(a)
		if int(a) > mx {
			mx = int(a)
		}
	}
	return mx, nil
}

// rewards checks the rewards of c.
func (b *Builder) rewards(c *Chunk) error {
	for i, r := range c.Reward {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return b.rowErr(c.Src, c.at(i), b.cols.Reward, "reward is %v: rewards must be finite numbers in [0,1]", r)
		}
		if r < 0 || r > 1 {
			return b.rowErr(c.Src, c.at(i), b.cols.Reward, "reward %g is outside [0,1]: rescale rewards to [0,1] before solving", r)
		}
	}
	return nil
}

// Add validates and appends the rows of c.
func (b *Builder) Add(c *Chunk) error {
	n := c.Len()
	if len(c.Reward) != n {
		panic("traj: chunk columns of different lengths")
	}
	off := len(b.site)
	b.site = grown(b.site, n)
	if err := b.addSites(c, b.site[off:]); err != nil {
		return err
	}
	var trajs []int64
	if b.survey == nil {
		// A survey keeps no id per row, only the keys of the rows at
		// step 1 (surveyState.add).
		b.traj = grown(b.traj, n)
		trajs = b.traj[len(b.traj)-n:]
	}
	if err := b.addTrajs(c, trajs, true); err != nil {
		return err
	}
	// step
	b.step = reserve(b.step, n)
	mx, err := b.steps(c, b.step[len(b.step):len(b.step)+n])
	if err != nil {
		return err
	}
	b.step = b.step[:len(b.step)+n]
	b.maxStep = max(b.maxStep, mx)
	// action
	b.action = grown(b.action, n)
	switch {
	case c.ActionStr != nil:
		if err := b.addActionLabels(c, b.action[len(b.action)-n:]); err != nil {
			return err
		}
	default:
		if err := setKind(&b.actionKind, kindInt, c.Src, b.cols.Action); err != nil {
			return err
		}
		mx, err := b.intActions(c, b.action[len(b.action)-n:])
		if err != nil {
			return err
		}
		b.maxAction = max(b.maxAction, mx)
	}
	// reward
	if err := b.rewards(c); err != nil {
		return err
	}
	// state
	if b.survey != nil {
		if err := b.CheckState(c); err != nil {
			return err
		}
		b.survey.add(b, c)
		return nil
	}
	b.reward = append(b.reward, c.Reward...)
	if err := b.addState(c); err != nil {
		return err
	}
	for i, x := range c.Censored {
		if x {
			b.censored = append(b.censored, int32(len(b.step)-n+i))
		}
	}
	b.chunks = append(b.chunks, c.Src)
	b.chunkEnds = append(b.chunkEnds, len(b.step))
	b.chunkOffs = append(b.chunkOffs, c.offs)
	return nil
}

// grown returns s with n more elements (zero, or left over from earlier
// use of its capacity), growing it as reserve does.
func grown[T any](s []T, n int) []T {
	s = reserve(s, n)
	return s[:len(s)+n]
}

// addSites interns the sites of c and writes their ids to dst (len
// c.Len()).
func (b *Builder) addSites(c *Chunk, dst []int32) error {
	nsites := len(b.siteLabels)
	switch {
	case c.SiteStr != nil:
		if err := setKind(&b.siteKind, kindStr, c.Src, b.cols.Site); err != nil {
			return err
		}
		for i, s := range c.SiteStr {
			dst[i] = b.internSite(s)
		}
	default:
		if err := setKind(&b.siteKind, kindInt, c.Src, b.cols.Site); err != nil {
			return err
		}
		// Rows often come in runs of one site; shuffled rows change site
		// at every row, so integer ids are looked up without formatting
		// them (b.siteInt), and formatted only the first time.
		last, id := int64(0), int32(-1)
		for i, s := range c.SiteInt {
			if id < 0 || s != last {
				last, id = s, b.intSite(s)
			}
			dst[i] = id
		}
	}
	if b.fixedSites && len(b.siteLabels) > nsites {
		return b.unknownSite(c, nsites)
	}
	return nil
}

// addTrajs checks the kind of c's trajectory ids and writes them to dst
// (len c.Len(), or nil to keep none): string ids interned, integer ids
// copied when copyInts is set.
func (b *Builder) addTrajs(c *Chunk, dst []int64, copyInts bool) error {
	switch {
	case c.TrajStr != nil:
		if err := setKind(&b.trajKind, kindStr, c.Src, b.cols.Traj); err != nil {
			return err
		}
		if dst == nil {
			return nil
		}
		for i, s := range c.TrajStr {
			id, ok := b.trajIDs[s]
			if !ok {
				id = int64(len(b.trajLabels))
				b.trajIDs[s] = id
				b.trajLabels = append(b.trajLabels, s)
			}
			dst[i] = id
		}
	default:
		if err := setKind(&b.trajKind, kindInt, c.Src, b.cols.Traj); err != nil {
			return err
		}
		if dst != nil && copyInts {
			copy(dst, c.TrajInt)
		}
	}
	return nil
}

// addActionLabels interns the string actions of c and writes their ids to
// dst (len c.Len()).
func (b *Builder) addActionLabels(c *Chunk, dst []int32) error {
	if err := setKind(&b.actionKind, kindStr, c.Src, b.cols.Action); err != nil {
		return err
	}
	fixed := len(b.opts.ActionLabels) > 0
	for i, s := range c.ActionStr {
		id, ok := b.actionIDs[s]
		if !ok {
			if fixed {
				return b.rowErr(c.Src, c.at(i), b.cols.Action, "unknown action label %q: the policy's actions are %v", s, b.opts.ActionLabels)
			}
			if len(b.actionLabels) >= MaxActions {
				return b.rowErr(c.Src, c.at(i), b.cols.Action, "%s", LabelLimitMsg(s))
			}
			id = int32(len(b.actionLabels))
			b.actionIDs[s] = id
			b.actionLabels = append(b.actionLabels, s)
		}
		dst[i] = id
	}
	return nil
}

func (b *Builder) stateCol(j int) string {
	sp := b.opts.State
	if sp.List || len(sp.Columns) == 0 {
		if len(sp.Columns) > 0 {
			return sp.Columns[0]
		}
		return "state"
	}
	return sp.Columns[j]
}

func (b *Builder) addState(c *Chunk) error {
	if err := b.CheckState(c); err != nil {
		return err
	}
	b.state = append(b.state, c.State...)
	return nil
}

// CheckState validates the state values of c against the spec (and, for a
// list, the width of earlier chunks) without keeping them.
func (b *Builder) CheckState(c *Chunk) error {
	sp := b.opts.State
	n := c.Len()
	w := c.W
	if sp.List {
		if !b.wKnown && n > 0 {
			b.w, b.wKnown = w, true
		}
		if w != b.w && n > 0 {
			return b.rowErr(c.Src, c.at(0), b.stateCol(0), "list of length %d, but earlier rows have length %d", w, b.w)
		}
	} else if w != b.w {
		panic("traj: chunk state width differs from the spec")
	}
	if len(c.State) != n*w {
		panic("traj: chunk state length differs from rows*width")
	}
	mx, err := b.states(c, n)
	b.maxState = max(b.maxState, mx)
	return err
}

// states checks the state values of the n rows of c, of width c.W,
// against the spec. It returns the largest integer state (-1 for none) and
// the first bad value's error.
func (b *Builder) states(c *Chunk, n int) (float64, error) {
	sp := b.opts.State
	w := c.W
	maxState := -1.0
	for i := 0; i < n; i++ {
		row := c.State[i*w : (i+1)*w]
		sum := 0.0
		for j, v := range row {
			col := b.stateCol(j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				if sp.List {
					return maxState, b.rowErr(c.Src, c.at(i), col, "element %d is %v: feature values must be finite", j, v)
				}
				return maxState, b.rowErr(c.Src, c.at(i), col, "state value is %v: states must be finite", v)
			}
			if sp.Integer {
				if v != math.Trunc(v) {
					return maxState, b.rowErr(c.Src, c.at(i), col, "state %g is not an integer", v)
				}
				if v < 0 {
					return maxState, b.rowErr(c.Src, c.at(i), col, "state %g is negative: integer states are 0..S-1", v)
				}
				if sp.Max > 0 && v >= float64(sp.Max) {
					return maxState, b.rowErr(c.Src, c.at(i), col, "state %g is out of range 0..%d", v, sp.Max-1)
				}
				if v > maxState {
					maxState = v
				}
			}
			if (sp.NonzeroSum || sp.List) && v < 0 {
				if sp.List {
					return maxState, b.rowErr(c.Src, c.at(i), col, "element %d is %g: features must be nonnegative (on the simplex)", j, v)
				}
				return maxState, b.rowErr(c.Src, c.at(i), col, "state value %g is negative: the action-block map needs nonnegative states", v)
			}
			sum += v
		}
		if sp.NonzeroSum && sum == 0 {
			return maxState, b.rowErr(c.Src, c.at(i), b.stateCol(0), "state is all zero in %v: the action-block map needs a nonzero state", sp.Columns)
		}
	}
	return maxState, nil
}

// intSite is internSite for an integer site id: ids 0..len(siteSmall)-1
// are looked up in a slice, others in a map, each interned the first time.
func (b *Builder) intSite(s int64) int32 {
	if b.siteSmall == nil {
		b.siteSmall = make([]int32, 1024)
		for i := range b.siteSmall {
			b.siteSmall[i] = -1
		}
	}
	if s >= 0 && s < int64(len(b.siteSmall)) {
		if id := b.siteSmall[s]; id >= 0 {
			return id
		}
	} else if id, ok := b.siteInt[s]; ok {
		return id
	}
	id := b.internSite(strconv.FormatInt(s, 10))
	if s >= 0 && s < int64(len(b.siteSmall)) {
		b.siteSmall[s] = id
	} else {
		if b.siteInt == nil {
			b.siteInt = map[int64]int32{}
		}
		b.siteInt[s] = id
	}
	return id
}

func (b *Builder) internSite(s string) int32 {
	id, ok := b.siteIDs[s]
	if !ok {
		id = int32(len(b.siteLabels))
		b.siteIDs[s] = id
		b.siteLabels = append(b.siteLabels, s)
	}
	return id
}

// origin returns the source location of row i (in insertion order).
func (b *Builder) origin(i int) (Origin, int) {
	c, _ := slices.BinarySearch(b.chunkEnds, i+1)
	start := 0
	if c > 0 {
		start = b.chunkEnds[c-1]
	}
	if offs := b.chunkOffs[c]; offs != nil {
		return b.chunks[c], int(offs[i-start])
	}
	return b.chunks[c], i - start
}

// Build sorts and links the rows and returns the Table. It reports
// duplicate (site, traj, step) rows, gaps inside an episode, and states the
// feature map cannot take once the number of actions is known.
//
// Duplicates, at any step, are reported before gaps; of each, the first in
// (step, site, trajectory) order. A gap's error wraps [ErrGap].
//
// For a step window (NewWindowBuilder) it builds steps lo..hi only: an empty
// window is no error, rows at step lo need no predecessor, gaps are checked
// for lo < h <= hi, and the trajectories of step lo are numbered from the
// survey's keys.
func (b *Builder) Build() (*Table, error) {
	t, _, _, err := b.build()
	return t, err
}

// build is Build. It also returns the Table's order of the rows: step h's
// rows are perm[bounds[h-1]:bounds[h]], indices in the order added.
func (b *Builder) build() (t *Table, perm []int32, bounds []int, err error) {
	if len(b.step) == 0 && !b.window {
		return nil, nil, nil, fmt.Errorf("%w: the input has no rows", ErrNoData)
	}
	cn := b.canonical()
	trajOrder := b.rankIDs(cn)
	if err := b.checkPhiRows(cn.A); err != nil {
		return nil, nil, nil, err
	}
	// Sort rows by (step, site, traj), ties in insertion order. The
	// Table's actions are written only once the rows are linked: until
	// then their memory holds the sorted trajectory ids (sortRows).
	action := hugepage.Make[int32](len(b.step))
	perm, buckets := b.sortRows(len(cn.sites), action)
	t = b.newTable(cn)
	bounds = b.stepBounds(perm, cn.H)
	cols := b.tableColumns(buckets != nil, action)
	t.sliceSteps(cols, bounds)
	as := &assembly{b: b, t: t, cols: cols, perm: perm, buckets: buckets, bounds: bounds,
		sem: make(chan struct{}, workers.Or(b.opts.Workers))}
	gap, dup := as.link()
	if err := as.duplicateErr(dup); err != nil {
		return nil, nil, nil, err
	}
	if err := as.gapErr(gap); err != nil {
		return nil, nil, nil, err
	}
	b.sorted = sortedIDs{} // read only by the sweeps above; the copy overwrites narrow ids
	as.copyRows()
	if err := as.numberTrajs(trajOrder); err != nil {
		return nil, nil, nil, err
	}
	b.censor(t, perm, bounds)
	return t, perm, bounds, nil
}

// censor marks the trajectories of the rows b.censored censored and gives
// those rows weight 0 (see Table.Censored). perm and bounds are build's
// order of the rows.
func (b *Builder) censor(t *Table, perm []int32, bounds []int) {
	if len(b.censored) == 0 {
		return
	}
	mark := make([]bool, len(perm))
	for _, r := range b.censored {
		mark[r] = true
	}
	n := 0
	for _, k := range t.Trajectories {
		n += k
	}
	t.Censored = make([]bool, n)
	for h := range t.Steps {
		st := &t.Steps[h]
		for j, r := range perm[bounds[h]:bounds[h+1]] {
			if !mark[r] {
				continue
			}
			if st.Weight == nil {
				st.Weight = make([]float64, st.Len())
				for i := range st.Weight {
					st.Weight[i] = 1
				}
			}
			st.Weight[j] = 0
			if x := st.Traj[j]; x >= 0 && int(x) < n {
				t.Censored[x] = true
			}
		}
	}
}

// rankIDs rewrites the rows' site, trajectory and action ids as their
// ranks in canonical order, so that sorting the ids sorts the rows
// canonically. For string trajectory ids it returns the labels' indices by
// rank (nil otherwise), by which a window's first step names its rows.
func (b *Builder) rankIDs(cn canonical) (trajOrder []int) {
	var trajRank []int64
	if b.trajKind == kindStr {
		trajOrder = canonicalOrder(b.trajLabels, false)
		trajRank = make([]int64, len(trajOrder))
		for r, id := range trajOrder {
			trajRank[id] = int64(r)
		}
	}
	for i := range b.site {
		b.site[i] = cn.siteRank[b.site[i]]
		if trajRank != nil {
			b.traj[i] = trajRank[b.traj[i]]
		}
		if cn.actionRank != nil {
			b.action[i] = cn.actionRank[b.action[i]]
		}
	}
	return trajOrder
}

// checkPhiRows checks a precomputed map read with the rows (A blocks, each
// on the simplex) now that A is known, naming the first bad row in input
// order; states given after NewTable are the caller's to check.
func (b *Builder) checkPhiRows(A int) error {
	n, w := len(b.step), b.w
	if !b.opts.State.List || n == 0 || b.statesLater {
		return nil
	}
	if err := b.checkPhiWidth(A, func() (Origin, int) { return b.origin(0) }); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if a, s, bad := phiOff(b.state[i*w:(i+1)*w], A); bad {
			o, r := b.origin(i)
			return b.phiSumErr(o, r, a, s)
		}
	}
	return nil
}

// newTable returns the Table's header for cn, with its per-site counts
// and steps made but the steps still empty.
func (b *Builder) newTable(cn canonical) *Table {
	t := &Table{Sites: cn.sites, Actions: cn.actions, A: cn.A, H: cn.H, W: b.w, Rows: len(b.step), Sources: b.sources}
	t.Trajectories = make([]int, len(cn.sites))
	t.Steps = make([]Step, cn.H)
	return t
}

// stepBounds splits perm, sorted by step, into steps: step h's rows are
// perm[bounds[h-1]:bounds[h]], found by binary search.
func (b *Builder) stepBounds(perm []int32, H int) []int {
	n := len(b.step)
	bounds := make([]int, H+1)
	for h := 1; h <= H; h++ {
		bounds[h] = bounds[h-1] + sort.Search(n-bounds[h-1], func(k int) bool { return int(b.step[perm[bounds[h-1]+k]]) > h })
	}
	return bounds
}

// columns are the Table's row arrays, in Build's order: each step's
// columns are slices of them.
type columns struct {
	next, traj, action []int32
	reward, state      []float64
}

// tableColumns makes the Table's row arrays; action is the one sortRows
// lent its memory to. When the rows were handed over (NewTable), each of
// their arrays gives its memory to a Table column of the same size once
// Build no longer reads it, so that the peak holds no extra row-sized
// array: Next takes the steps' (dead once the bounds are known) and Traj
// the site ids' (dead once each step's sites are counted and the errors
// named); Reward, after a counting sort (counted), the trajectory ids'
// (dead once the sort has copied them to b.sorted). With the states later
// the Table's states are the array NewTable was given.
func (b *Builder) tableColumns(counted bool, action []int32) columns {
	n, w := len(b.step), b.w
	if !b.owned {
		return columns{next: hugepage.Make[int32](n), traj: hugepage.Make[int32](n), action: action,
			reward: hugepage.Make[float64](n), state: hugepage.Make[float64](n * w)}
	}
	c := columns{next: b.step[:n:n], traj: b.site[:n:n], action: action}
	if counted {
		c.reward = float64sOf(b.traj[:n:n])
		b.traj = nil
	} else {
		c.reward = hugepage.Make[float64](n)
	}
	if b.statesLater {
		c.state = b.tableState
	} else {
		c.state = hugepage.Make[float64](n * w)
	}
	return c
}

// float64sOf returns the memory of ids as float64s, for an array of ids
// no longer read: both types are 8 bytes and hold no pointers, so the
// collector keeps the one array alive through either slice. Whatever the
// float64s hold is meaningless until written.
func float64sOf(ids []int64) []float64 {
	if len(ids) == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(ids))), len(ids))
}

// sliceSteps gives each step its rows' part of cols (capped, so that no
// step can grow into the next) and an empty SiteStart.
func (t *Table) sliceSteps(cols columns, bounds []int) {
	w := t.W
	for h := 1; h <= t.H; h++ {
		lo, hi := bounds[h-1], bounds[h]
		st := &t.Steps[h-1]
		st.SiteStart = make([]int32, len(t.Sites)+1)
		st.Traj, st.Next = cols.traj[lo:hi:hi], cols.next[lo:hi:hi]
		st.Action, st.Reward = cols.action[lo:hi:hi], cols.reward[lo:hi:hi]
		st.State = cols.state[lo*w : hi*w : hi*w]
	}
}

// assembly is a Table in the making, with what Build's steps after the
// sort share: the rows' order and the Table's columns.
type assembly struct {
	b       *Builder
	t       *Table
	cols    columns
	perm    []int32 // the rows in (step, site, traj) order
	buckets []int32 // after a counting sort, its buckets' bounds in perm (see sortRows); nil otherwise
	bounds  []int   // step h's rows are perm[bounds[h-1]:bounds[h]]
	sem     chan struct{}
}

// eachStep calls f for every step h, on at most cap(sem) goroutines at a
// time, and returns when all calls have.
func (as *assembly) eachStep(f func(h int)) {
	var wg sync.WaitGroup
	for h := 1; h <= as.t.H; h++ {
		wg.Add(1)
		as.sem <- struct{}{}
		go func() {
			defer func() { <-as.sem; wg.Done() }()
			f(h)
		}()
	}
	wg.Wait()
}

// isFirst reports whether step h's rows need no predecessor: step 1, or
// the first step of a window.
func (b *Builder) isFirst(h int) bool { return h == 1 || (b.window && h == b.lo) }

// sameKey reports whether rows x and y have the same site and trajectory.
func (b *Builder) sameKey(x, y int) bool { return b.site[x] == b.site[y] && b.traj[x] == b.traj[y] }

// trajAt returns the trajectory id at position j of perm, which after a
// counting sort only b.sorted still holds.
func (as *assembly) trajAt(j int) int64 {
	if as.buckets != nil {
		return as.b.sorted.at(j)
	}
	return as.b.traj[as.perm[j]]
}

// bucket returns the bounds in perm of step h's rows of site k, after a
// counting sort.
func (as *assembly) bucket(h, k int) (int, int) {
	if h > as.b.maxStep {
		return as.bounds[h-1], as.bounds[h-1]
	}
	i := (h-1)*len(as.t.Sites) + k
	return int(as.buckets[i]), int(as.buckets[i+1])
}

// link sets each row's Next to its successor's index in the next step by
// merging each step's sorted rows with the previous step's, the steps in
// parallel (step h writes only step h-1's Next). A row at step h without a
// partner at h-1 is a gap; the same sweep finds duplicates, neighbours in a
// step's sorted rows with equal keys. It returns per step the index in
// perm of its first gap and of its first duplicate, or -1. Duplicates, at
// any step, are reported before gaps, so a step's sweep goes on looking
// for them past its first gap.
func (as *assembly) link() (gap, dup []int) {
	as.eachStep(func(h int) {
		for j := range as.t.Steps[h-1].Next {
			as.t.Steps[h-1].Next[j] = -1
		}
	})
	gap = make([]int, as.t.H+1)
	dup = make([]int, as.t.H+1)
	as.eachStep(func(h int) {
		gap[h], dup[h] = -1, -1
		if as.buckets == nil {
			as.linkSorted(h, &gap[h], &dup[h])
			return
		}
		b, nsites := as.b, len(as.t.Sites)
		if ids := &b.sorted; ids.narrow != nil {
			linkBuckets(ids.narrow, h, b.isFirst(h), as.bucket, nsites, as.bounds, as.t.Steps, &gap[h], &dup[h])
		} else {
			linkBuckets(ids.wide, h, b.isFirst(h), as.bucket, nsites, as.bounds, as.t.Steps, &gap[h], &dup[h])
		}
	})
	return gap, dup
}

// linkSorted is link's sweep of step h after a comparison sort, comparing
// whole keys (site, then trajectory); it sets *gap and *dup as linkBuckets
// does.
func (as *assembly) linkSorted(h int, gap, dup *int) {
	b, perm, pos := as.b, as.perm, as.bounds
	cur := perm[pos[h-1]:pos[h]]
	if b.isFirst(h) {
		for j := 1; j < len(cur); j++ {
			if b.sameKey(int(cur[j-1]), int(cur[j])) {
				*dup = pos[h-1] + j
				return
			}
		}
		return
	}
	prev := &as.t.Steps[h-2]
	before := perm[pos[h-2]:pos[h-1]]
	i := 0
	for j, r32 := range cur {
		r := int(r32)
		if j > 0 && b.sameKey(int(cur[j-1]), r) {
			*dup = pos[h-1] + j
			return
		}
		if *gap >= 0 {
			continue
		}
		for i < len(before) && b.keyLess(int(before[i]), r) {
			i++
		}
		if i == len(before) || b.keyLess(r, int(before[i])) {
			*gap = pos[h-1] + j
			continue
		}
		prev.Next[i] = int32(j)
		i++
	}
}

// duplicateErr returns the error for the first step's first duplicate in
// dup (nil when there is none), naming the pair's later row in the input.
func (as *assembly) duplicateErr(dup []int) error {
	b := as.b
	for h := 1; h <= as.t.H; h++ {
		j := dup[h]
		if j < 0 {
			continue
		}
		x, y := int(as.perm[j-1]), int(as.perm[j])
		o1, r1 := b.origin(x)
		o2, r2 := b.origin(y)
		if r2v := o2.Row + int64(r2); o1.File == o2.File && o1.Row+int64(r1) > r2v {
			o1, r1, o2, r2 = o2, r2, o1, r1
		}
		return &RowError{File: o2.File, RowGroup: o2.RowGroup, Row: o2.Row + int64(r2), Column: b.cols.Step,
			Msg: fmt.Sprintf("duplicate row for site %s, traj %s, step %d (also at %s row %d): each (site, traj, step) must appear once",
				as.t.Sites[b.site[y]], b.trajLabel(as.trajAt(j)), h, o1.File, o1.Row+int64(r1)), Err: ErrBadData}
	}
	return nil
}

// gapError is the error of a gap: site's episode traj has a row at step h
// (as read, after the shift of first) but none at h-1. Steps numbered
// from 0 are named as the data number them, and an episode that starts at
// data step 1 is [ErrStepsFromOne].
func gapError(first FirstStep, site, traj string, h int) (string, error) {
	if first != StepsFrom0 {
		return fmt.Sprintf("gap inside an episode: site %s, traj %s has a row at step %d but none at step %d: episodes start at step 1 and may end early but not skip steps", site, traj, h, h-1), ErrGap
	}
	if h == 2 {
		return fmt.Sprintf("site %s, traj %s starts at step 1, but the steps are read as numbered from 0 (data step s is step s+1 of 1..H), so its step 0 is missing", site, traj), ErrStepsFromOne
	}
	return fmt.Sprintf("gap inside an episode: site %s, traj %s has a row at step %d but none at step %d: with the steps numbered from 0, episodes start at step 0 and may end early but not skip steps", site, traj, h-1, h-2), ErrGap
}

// gapErr returns the error for the first step's first gap in gap (nil
// when there is none).
func (as *assembly) gapErr(gap []int) error {
	b := as.b
	for h := 1; h <= as.t.H; h++ {
		if j := gap[h]; j >= 0 {
			r := int(as.perm[j])
			oo, rr := b.origin(r)
			msg, err := gapError(b.opts.FirstStep, as.t.Sites[b.site[r]], b.trajLabel(as.trajAt(j)), h)
			return &RowError{File: oo.File, RowGroup: oo.RowGroup, Row: oo.Row + int64(rr), Column: b.cols.Step, Msg: msg, Err: err}
		}
	}
	return nil
}

// copyRows copies the rows into the steps and counts each step's rows per
// site. With the states later and the sites counted by the buckets only
// actions and rewards move, block by block of the input when every step's
// rows are in row order (input sorted by site, traj, step); otherwise the
// steps copy in parallel, each writing only its own slices.
func (as *assembly) copyRows() {
	b := as.b
	action, reward := as.cols.action, as.cols.reward
	blocked := b.statesLater && as.buckets != nil && visitByBlocks(as.perm, as.bounds, workers.Or(b.opts.Workers), func(j int, r int32) {
		action[j] = b.action[r]
		reward[j] = b.reward[r]
	})
	as.eachStep(func(h int) { as.copyStep(h, blocked) })
}

// copyStep is copyRows' part for step h: it copies the step's rows
// (unless blocked did) and turns its counts per site, from the buckets or
// the rows, into SiteStart's cumulative ones.
func (as *assembly) copyStep(h int, blocked bool) {
	b, w, buckets := as.b, as.t.W, as.buckets
	start := as.bounds[h-1]
	perm := as.perm
	st := &as.t.Steps[h-1]
	for j := range st.Action {
		if blocked {
			break // copied by copyRows
		}
		r := int(perm[start+j])
		st.Action[j] = b.action[r]
		st.Reward[j] = b.reward[r]
		if !b.statesLater {
			copy(st.State[j*w:(j+1)*w], b.state[r*w:(r+1)*w])
		}
		if buckets == nil {
			st.SiteStart[b.site[r]+1]++
		}
	}
	nsites := len(as.t.Sites)
	if buckets != nil {
		for k := range nsites {
			lo, hi := as.bucket(h, k)
			st.SiteStart[k+1] = int32(hi - lo)
		}
	}
	for k := range nsites {
		st.SiteStart[k+1] += st.SiteStart[k]
	}
}

// numberTrajs numbers the trajectories, step by step, and counts them per
// site: every trajectory starts at step 1, so its ordinal is its index
// there, and a later row takes its predecessor's. A window starting later
// looks its first step's trajectories up in the survey's keys, by label
// through trajOrder when the ids are strings.
func (as *assembly) numberTrajs(trajOrder []int) error {
	b, t := as.b, as.t
	for h := 1; h <= t.H; h++ {
		st := &t.Steps[h-1]
		if b.isFirst(h) {
			if h > 1 && b.trajs != nil {
				if st.Len() > 0 && (b.trajKind == kindStr) != (b.trajs.strs != nil) {
					return fmt.Errorf("%w: the trajectory ids changed type since the input was surveyed: read the input again", ErrBadData)
				}
				rows := as.perm[as.bounds[h-1]:as.bounds[h]]
				b.trajs.number(b, st, rows, func(r int32) string { return b.trajLabels[trajOrder[b.traj[r]]] })
			} else {
				for j := range st.Traj {
					st.Traj[j] = int32(j)
				}
			}
			for k := range t.Sites {
				t.Trajectories[k] += int(st.SiteStart[k+1] - st.SiteStart[k])
			}
			continue
		}
		prev := &t.Steps[h-2]
		for i, nx := range prev.Next {
			if nx >= 0 {
				st.Traj[nx] = prev.Traj[i]
			}
		}
	}
	return nil
}

// linkBuckets is Build's sweep of step h when the counting sort gave the
// (step, site) buckets: it links each row of step h-1 to its trajectory's
// row at step h (unless first), and sets *gap to the index in perm of the
// first row of step h without a predecessor and *dup to that of the first
// row equal to the one before it, as the sweep over whole steps does.
// Within a bucket the rows share step and site, so only trajectory ids are
// compared: traj[j] is the id of row perm[j] (less a common base).
func linkBuckets[K int32 | int64](traj []K, h int, first bool, bucket func(h, k int) (int, int), nsites int, pos []int, steps []Step, gap, dup *int) {
	for k := range nsites {
		lo, hi := bucket(h, k)
		if first {
			for j := lo + 1; j < hi; j++ {
				if traj[j-1] == traj[j] {
					*dup = j
					return
				}
			}
			continue
		}
		plo, phi := bucket(h-1, k)
		next := steps[h-2].Next[plo-pos[h-2] : phi-pos[h-2]]
		before := traj[plo:phi]
		i := 0
		for j := lo; j < hi; j++ {
			tr := traj[j]
			if j > lo && tr == traj[j-1] {
				*dup = j
				return
			}
			if *gap >= 0 {
				continue
			}
			for i < len(before) && before[i] < tr {
				i++
			}
			if i == len(before) || tr < before[i] {
				*gap = j
				continue
			}
			next[i] = int32(j - pos[h-1])
			i++
		}
	}
}

// canonical is what Build derives from the labels and maxima seen: the
// canonical site order, the action labels, A and H.
type canonical struct {
	sites      []string // canonical order
	siteRank   []int32  // interned site id -> canonical index
	actions    []string // nil for integer actions
	actionRank []int32  // interned action id -> index in actions; nil when ids are already ranks
	A, H       int
}

func (b *Builder) canonical() canonical {
	var c canonical
	siteOrder := canonicalOrder(b.siteLabels, b.siteKind == kindInt)
	c.siteRank = make([]int32, len(siteOrder))
	c.sites = make([]string, len(siteOrder))
	for r, id := range siteOrder {
		c.siteRank[id] = int32(r)
		c.sites[r] = b.siteLabels[id]
	}
	// Canonical action order: sorted labels (unless fixed by a policy).
	c.A = b.maxAction + 1
	if b.actionKind == kindStr {
		if len(b.opts.ActionLabels) > 0 {
			c.actions = slices.Clone(b.opts.ActionLabels)
		} else {
			order := canonicalOrder(b.actionLabels, false)
			c.actionRank = make([]int32, len(order))
			c.actions = make([]string, len(order))
			for r, id := range order {
				c.actionRank[id] = int32(r)
				c.actions[r] = b.actionLabels[id]
			}
		}
		c.A = len(c.actions)
	}
	if b.opts.Actions > c.A {
		c.A = b.opts.Actions
	}
	c.H = b.maxStep
	if b.opts.Horizon > 0 {
		c.H = b.opts.Horizon
	}
	return c
}

// checkPhiWidth checks the precomputed map's list length b.w against A
// actions; first locates the input's first row, which the error names.
func (b *Builder) checkPhiWidth(A int, first func() (Origin, int)) error {
	w := b.w
	if w%A != 0 || w == 0 || (b.opts.State.D > 0 && w != A*b.opts.State.D) {
		o, r := first()
		want := "a multiple of A = " + strconv.Itoa(A)
		if b.opts.State.D > 0 {
			want = strconv.Itoa(A*b.opts.State.D) + " (A*d)"
		}
		return b.rowErr(o, r, b.stateCol(0), "phi has length %d, want %s: phi holds phi(s,a) for every action, row-major by action", w, want)
	}
	return nil
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

func (b *Builder) phiSumErr(o Origin, r, a int, s float64) error {
	return b.rowErr(o, r, b.stateCol(0), "phi(s, a=%d) sums to %.9g, not 1: features must lie on the simplex", a, s)
}

// unknownSite reports the first row of c whose site was not interned
// before (at or above id nsites) when the sites are fixed.
func (b *Builder) unknownSite(c *Chunk, nsites int) error {
	base := len(b.site) - c.Len()
	for i := range c.Len() {
		if id := int(b.site[base+i]); id >= nsites {
			return b.rowErr(c.Src, c.at(i), b.cols.Site, "site %s was not in the survey of the input: the input changed since it was surveyed", b.siteLabels[id])
		}
	}
	return nil
}

// keyLess orders rows by (site, traj).
func (b *Builder) keyLess(x, y int) bool {
	if b.site[x] != b.site[y] {
		return b.site[x] < b.site[y]
	}
	return b.traj[x] < b.traj[y]
}

func (b *Builder) trajLabel(t int64) string {
	if b.trajKind == kindStr {
		// t is a rank here; find the label by rank.
		order := canonicalOrder(b.trajLabels, false)
		return strconv.Quote(b.trajLabels[order[t]])
	}
	return strconv.FormatInt(t, 10)
}

func (b *Builder) less(x, y int) int {
	if c := cmp.Compare(b.step[x], b.step[y]); c != 0 {
		return c
	}
	if c := cmp.Compare(b.site[x], b.site[y]); c != 0 {
		return c
	}
	return cmp.Compare(b.traj[x], b.traj[y])
}

// canonicalOrder returns the indices of labels in canonical order: numeric
// when numeric is set (labels are decimal integers), lexical otherwise.
func canonicalOrder(labels []string, numeric bool) []int {
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	if numeric {
		vals := make([]int64, len(labels))
		for i, l := range labels {
			vals[i], _ = strconv.ParseInt(l, 10, 64)
		}
		slices.SortFunc(order, func(x, y int) int { return cmp.Compare(vals[x], vals[y]) })
	} else {
		slices.SortFunc(order, func(x, y int) int { return cmp.Compare(labels[x], labels[y]) })
	}
	return order
}
