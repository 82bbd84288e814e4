package federate

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// MetaKey is the message file's metadata key holding its header (JSON).
const MetaKey = "grmdp.federate.message"

// Message is what one site sends for one round: aggregates only.
type Message struct {
	FormatVersion int    `json:"format_version"`
	JobID         string `json:"job_id"`
	Round         int    `json:"round"`
	Step          int    `json:"step"`
	// Kind is the round's kind: "" for a solve round, KindValue for the
	// value round, KindEval for an evaluation round, KindShape for the
	// shape round.
	Kind string `json:"kind,omitempty"`
	// Withheld names the sums of a value or evaluation round that
	// disclosure control kept at the site.
	Withheld []string `json:"withheld,omitempty"`
	Site     string   `json:"site"`
	// Map is the job's feature map, so that a reader can name each
	// feature (see featureName).
	Map features.Map `json:"feature_map"`
	// Numeric says the site column was an integer column (the central
	// solve then orders sites numerically).
	Numeric bool `json:"site_column_numeric"`
	// Trajectories and Rows are the site's totals over every step.
	Trajectories int `json:"trajectories"`
	Rows         int `json:"rows"`
	// StepRows is the number of rows the step contributes: 0 when the
	// site has fewer than MinRows rows there (Silent).
	StepRows float64 `json:"step_rows"`
	Silent   bool    `json:"silent"`
	// Suppressed is the number of observed features withheld for being
	// counted at fewer than MinCount rows.
	Suppressed int `json:"suppressed_features"`
	// Weighted says the site's rows carry weights: its Grams, right-hand
	// sides and action counts are then weighted sums, its feature counts
	// still counts of rows.
	Weighted   bool             `json:"weighted,omitempty"`
	Disclosure solve.Disclosure `json:"disclosure"`
	// Blocks, for a precomputed map, labels each feature's block in the
	// site's partition (which features its rows hold together); Gram is
	// packed in it. GramRows, for a stationary job, holds the rows behind
	// each step's Gram: Gram then holds every step's, in step order.
	Blocks   []int32   `json:"blocks,omitempty"`
	GramRows []float64 `json:"gram_rows,omitempty"`
	// Runs names the backward passes whose right-hand sides RHS holds,
	// in order.
	Runs []string `json:"runs"`
	// Sources are the site's data files (base name, size, fingerprint,
	// rows): provenance without a path.
	Sources []traj.Source `json:"sources,omitempty"`
	// Shape holds a shape round's sizes (KindShape).
	Shape    *Sizes `json:"shape,omitempty"`
	Checksum string `json:"checksum"`

	// Gram is the step's packed Gram (solve.Layout), Counts the released
	// feature counts (0: none, or fewer than MinCount), Behaviour the
	// released action counts (solve.Stats.BehaviourCounts), RHS[i] the
	// right-hand side of run Runs[i].
	Gram      []float64   `json:"-"`
	Counts    []float64   `json:"-"`
	Behaviour []float64   `json:"-"`
	RHS       [][]float64 `json:"-"`
	// Extra holds the vectors of value and evaluation rounds (see
	// value.go and eval.go), in file order.
	Extra []Vec `json:"-"`
}

// Vec is one named vector of a message file.
type Vec struct {
	Name   string
	Index  int32
	Values []float64
}

// vectors returns the message's vectors in file order.
func (m *Message) vectors() []Vec {
	v := []Vec{{"gram", 0, m.Gram}, {"counts", 0, m.Counts}, {"behaviour", 0, m.Behaviour}}
	if m.Kind != "" {
		// Value and evaluation rounds send only the vectors they hold.
		v = v[:0]
		for _, x := range []Vec{{"gram", 0, m.Gram}, {"counts", 0, m.Counts}, {"behaviour", 0, m.Behaviour}} {
			if x.Values != nil {
				v = append(v, x)
			}
		}
	}
	for i, r := range m.RHS {
		v = append(v, Vec{"rhs", int32(i), r})
	}
	return append(v, m.Extra...)
}

// sum returns the message's checksum: SHA-256 over its header (without
// the checksum) and every vector's name, index and values' bits. It fails
// only for a header that cannot be written as JSON (an unknown map kind, a
// non-finite number), which Decode refuses before.
func (m *Message) sum() (string, error) {
	c := *m
	c.Checksum = ""
	hd, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(hd)
	var buf [8]byte
	for _, v := range m.vectors() {
		h.Write([]byte(v.Name))
		binary.LittleEndian.PutUint64(buf[:], uint64(v.Index))
		h.Write(buf[:])
		binary.LittleEndian.PutUint64(buf[:], uint64(len(v.Values)))
		h.Write(buf[:])
		for _, x := range v.Values {
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(x))
			h.Write(buf[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// seal sets the checksum. A message this package builds always has one:
// its map is the job's, checked when the job was read.
func (m *Message) seal() {
	sum, err := m.sum()
	if err != nil {
		panic(fmt.Sprintf("federate: sealing a message: %v", err))
	}
	m.Checksum = sum
}

// Encode returns the file's metadata and vectors.
func (m *Message) Encode() (map[string]string, []Vec, error) {
	hd, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	return map[string]string{MetaKey: string(hd)}, m.vectors(), nil
}

// Decode rebuilds a message from a file's metadata and vectors and checks
// its format version and checksum. name is used in errors.
func Decode(name string, meta map[string]string, vecs []Vec) (*Message, error) {
	hd, ok := meta[MetaKey]
	if !ok {
		return nil, refusef("%s: no %q metadata: not a grmdp federated message", name, MetaKey)
	}
	m := &Message{}
	if err := json.Unmarshal([]byte(hd), m); err != nil {
		return nil, refusef("%s: corrupted header: %v", name, err)
	}
	if m.FormatVersion != FormatVersion {
		return nil, refusef("%s: message format_version %d, this grmdp reads %d", name, m.FormatVersion, FormatVersion)
	}
	if err := checkHeader(m); err != nil {
		return nil, refusef("%s: corrupted header: %v", name, err)
	}
	m.RHS = make([][]float64, len(m.Runs))
	seen := map[string]bool{}
	for _, v := range vecs {
		key := fmt.Sprint(v.Name, v.Index)
		if seen[key] {
			return nil, refusef("%s: corrupted: vector %s %d twice", name, v.Name, v.Index)
		}
		seen[key] = true
		switch {
		case v.Name == "gram" && v.Index == 0:
			m.Gram = v.Values
		case v.Name == "counts" && v.Index == 0:
			m.Counts = v.Values
		case v.Name == "behaviour" && v.Index == 0:
			m.Behaviour = v.Values
		case v.Name == "rhs" && v.Index >= 0 && int(v.Index) < len(m.Runs):
			m.RHS[v.Index] = v.Values
		case m.Kind != "" && extraVector(m.Kind, v.Name):
			m.Extra = append(m.Extra, v)
		default:
			return nil, refusef("%s: corrupted: unexpected vector %s %d", name, v.Name, v.Index)
		}
	}
	if m.Kind == "" && (m.Gram == nil || m.Counts == nil || m.Behaviour == nil) {
		return nil, refusef("%s: corrupted: a vector is missing", name)
	}
	if m.Kind == KindValue {
		// The value round's runs carry sums, not right-hand sides.
		m.RHS = nil
	}
	for i, r := range m.RHS {
		if r == nil {
			return nil, refusef("%s: corrupted: right-hand side %d is missing", name, i)
		}
	}
	got, err := m.sum()
	if err != nil {
		return nil, refusef("%s: corrupted header: %v", name, err)
	}
	if got != m.Checksum {
		return nil, refusef("%s: corrupted: checksum %s, the content sums to %s", name, m.Checksum, got)
	}
	return m, nil
}

// Bounds on a message header's sizes, far above any job's: a header
// beyond them is corrupted, and is refused before anything is sized by it.
const (
	maxActions  = 1 << 16
	maxFeatures = 1 << 24
)

// checkHeader checks what a header says of itself before anything reads
// its vectors by it: a known map with sizes a job can have, and no
// negative or non-finite number.
func checkHeader(m *Message) error {
	if m.Kind == KindShape {
		return checkShapeHeader(m)
	}
	mp := &m.Map
	if _, err := mp.Kind.MarshalText(); err != nil {
		return fmt.Errorf("the feature map's kind: %v", err)
	}
	if mp.A < 1 || mp.A > maxActions {
		return fmt.Errorf("the feature map has %d actions", mp.A)
	}
	if mp.S < 0 || mp.P < 0 || mp.D < 0 || mp.S > maxFeatures || mp.P > maxFeatures || mp.D > maxFeatures {
		return fmt.Errorf("the feature map's sizes S = %d, p = %d, d = %d", mp.S, mp.P, mp.D)
	}
	if err := checkMap(mp); err != nil {
		return err
	}
	size := float64(mp.A)
	switch mp.Kind {
	case features.Tabular:
		size *= float64(mp.S)
	case features.ActionBlock:
		size *= float64(mp.P)
	case features.Precomputed:
		size *= float64(mp.D)
	case features.Binned:
		for _, b := range mp.Bins {
			size *= float64(len(b.Cuts) + 1)
		}
	case features.SoftBinned:
		n := 0
		for _, b := range mp.Bins {
			n += len(b.Cuts)
		}
		size *= float64(n)
	}
	if size < 1 || size > maxFeatures {
		return fmt.Errorf("the feature map has %g features", size)
	}
	if m.Round < 0 || m.Step < 0 || m.Trajectories < 0 || m.Rows < 0 || m.Suppressed < 0 || m.Disclosure.MinCount < 0 || m.Disclosure.MinRows < 0 {
		return fmt.Errorf("a negative round, step, total or threshold")
	}
	if !finite([]float64{m.StepRows}) || m.StepRows < 0 || !finite(m.GramRows) {
		return fmt.Errorf("step rows %v, Gram rows %v", m.StepRows, m.GramRows)
	}
	for _, b := range m.Blocks {
		if b < 0 || int(b) >= len(m.Blocks) {
			return fmt.Errorf("block label %d of %d features", b, len(m.Blocks))
		}
	}
	for _, s := range m.Sources {
		if s.Size < 0 || s.Rows < 0 {
			return fmt.Errorf("data file %q with %d bytes and %d rows", s.Path, s.Size, s.Rows)
		}
	}
	return nil
}

// checkShape refuses a message whose vectors do not have the job's sizes.
func (m *Message) checkShape(name string, j *Job, layout *solve.Layout) error {
	d := j.Map.Dim()
	want := map[string][2]int{
		"gram":      {len(m.Gram), gramSize(j, layout)},
		"counts":    {len(m.Counts), d},
		"behaviour": {len(m.Behaviour), behaviourSize(j)},
	}
	for _, k := range []string{"gram", "counts", "behaviour"} {
		if w := want[k]; w[0] != w[1] {
			return refusef("%s: %s has %d values, the job's map needs %d", name, k, w[0], w[1])
		}
	}
	for i, r := range m.RHS {
		if len(r) != d {
			return refusef("%s: right-hand side %d has %d values, want d = %d", name, i, len(r), d)
		}
	}
	for _, x := range m.Gram {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return refusef("%s: the Gram holds %v", name, x)
		}
	}
	return nil
}

// behaviourSize is the length of a message's behaviour counts.
func behaviourSize(j *Job) int {
	if S, discrete := solve.BehaviourCells(&j.Map); discrete {
		return S * j.Map.A
	}
	return j.Map.A
}

// featureName names feature i of map m in words.
func featureName(m *features.Map, i int) string {
	switch m.Kind {
	case features.Tabular:
		return fmt.Sprintf("state %d, action %d", i/m.A, i%m.A)
	case features.Indicator:
		switch {
		case i < m.A:
			return fmt.Sprintf("state 0, action %d", i)
		case i == m.A:
			return "state 1 (any action)"
		}
		return "state 2 (any action)"
	case features.ActionBlock:
		col := fmt.Sprint(i % m.P)
		if i%m.P < len(m.StateColumns) {
			col = m.StateColumns[i%m.P]
		}
		return fmt.Sprintf("action %d, %s", i/m.P, col)
	case features.Binned:
		var parts []string
		for j, b := range m.CellBins(i / m.A) {
			parts = append(parts, m.Bins[j].BinLabel(b))
		}
		return fmt.Sprintf("%s, action %d", strings.Join(parts, " & "), i%m.A)
	case features.SoftBinned:
		k := m.Dim() / m.A
		c := i % k
		for _, b := range m.Bins {
			if c < len(b.Cuts) {
				return fmt.Sprintf("%s near %s, action %d", b.Column, strconv.FormatFloat(b.Cuts[c], 'g', 6, 64), i/k)
			}
			c -= len(b.Cuts)
		}
	}
	return fmt.Sprintf("feature %d", i)
}
