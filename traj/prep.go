package traj

import (
	"fmt"
	"sort"
	"strconv"
)

// FirstStep says how the step column is numbered.
type FirstStep uint8

const (
	// StepsFrom1 reads steps as numbered 1..H (the zero value, the
	// contract's numbering): a step 0 is an error.
	StepsFrom1 FirstStep = iota
	// StepsFrom0 reads steps numbered 0..H-1 as 1..H: every step is
	// shifted by exactly 1.
	StepsFrom0
	// StepsDetect is StepsFrom0 when the smallest step in the data is 0,
	// StepsFrom1 otherwise. Readers resolve it before building (see
	// Table.ZeroStepFile); a Builder treats it as StepsFrom1.
	StepsDetect
)

// ParseFirstStep parses a --first-step value: "0", "1" or "detect" (and ""
// for detect).
func ParseFirstStep(s string) (FirstStep, error) {
	switch s {
	case "1":
		return StepsFrom1, nil
	case "0":
		return StepsFrom0, nil
	case "", "detect":
		return StepsDetect, nil
	}
	return 0, fmt.Errorf("%q is not a first step: want 0, 1 or detect", s)
}

// Shift is what a reader adds to every step read: 1 for StepsFrom0, else
// 0.
func (f FirstStep) Shift() int64 {
	if f == StepsFrom0 {
		return 1
	}
	return 0
}

// NullPolicy says what a reader does with a row that has a NULL in a column
// the table needs besides the site, trajectory and step (the action, the
// reward, the state columns).
type NullPolicy uint8

const (
	// NullsError makes such a row an error (the zero value).
	NullsError NullPolicy = iota
	// NullsTruncate ends the row's episode before it: the row and every
	// later row of its episode are dropped, and the episode is censored
	// (Table.Censored): its rows before the NULL remain transitions, but
	// its return is unknown. An episode left with no rows is dropped.
	NullsTruncate
	// NullsDropEpisode drops every row of the row's episode.
	NullsDropEpisode
)

// nullPolicies names the policies in the order of their values, as the
// names ParseNullPolicy reads.
var nullPolicies = []string{"error", "truncate", "drop-episode"}

func (p NullPolicy) String() string {
	if int(p) < len(nullPolicies) {
		return nullPolicies[p]
	}
	return "NullPolicy(" + strconv.Itoa(int(p)) + ")"
}

// ParseNullPolicy parses a null policy's name: error, truncate or drop-episode.
func ParseNullPolicy(s string) (NullPolicy, error) {
	for i, n := range nullPolicies {
		if s == n {
			return NullPolicy(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not a null policy: want error, truncate or drop-episode", s)
}

// NullCount is what a null policy removed from one site: Rows rows, from
// Episodes episodes (Truncated of them kept their rows before the first
// NULL, the others were dropped whole).
type NullCount struct {
	Site      string `json:"site"`
	Rows      int    `json:"rows"`
	Episodes  int    `json:"episodes"`
	Truncated int    `json:"truncated"`
}

// episodeKey identifies an episode across chunks: (site, trajectory), as
// integers or strings.
type episodeKey struct {
	siteInt, trajInt int64
	siteStr, trajStr string
}

func chunkKey(c *Chunk, i int) episodeKey {
	var k episodeKey
	if c.SiteStr != nil {
		k.siteStr = c.SiteStr[i]
	} else {
		k.siteInt = c.SiteInt[i]
	}
	if c.TrajStr != nil {
		k.trajStr = c.TrajStr[i]
	} else {
		k.trajInt = c.TrajInt[i]
	}
	return k
}

// DropMissing applies a null policy to chunks whose Missing marks the rows
// with a NULL (NullsTruncate or NullsDropEpisode; the rows' missing values
// are placeholders). It returns the chunks with the dropped rows left out
// (a chunk keeps its Origin, so later errors still name the file's rows)
// and the counts per site (NullCuts.Counts).
//
// An episode's first NULL is its smallest step with a missing value; the
// result depends on the rows' content only, not on the chunks' order or
// sizes. A reader that cannot hold every chunk at once marks them all
// (NullCuts.Mark) in a first pass and applies the cuts (NullCuts.Apply) to
// the chunks of a second.
func DropMissing(chunks []*Chunk, policy NullPolicy) ([]*Chunk, []NullCount) {
	n := NewNullCuts(policy)
	for _, c := range chunks {
		n.Mark(c)
	}
	out := make([]*Chunk, 0, len(chunks))
	for _, c := range chunks {
		if k := n.Apply(c); k != nil {
			out = append(out, k)
		}
	}
	return out, n.Counts()
}

// NullCuts holds, for each episode with a NULL, the step of its first
// NULL, and tallies what Apply removes.
type NullCuts struct {
	policy   NullPolicy
	cut      map[episodeKey]int64
	eps      map[episodeKey]*cutTally
	strSites bool
}

type cutTally struct{ kept, dropped int }

// NewNullCuts returns an empty NullCuts for policy.
func NewNullCuts(policy NullPolicy) *NullCuts {
	return &NullCuts{policy: policy, cut: map[episodeKey]int64{}, eps: map[episodeKey]*cutTally{}}
}

// Mark records the NULLs of c (its Missing rows).
func (n *NullCuts) Mark(c *Chunk) {
	if c.SiteStr != nil {
		n.strSites = true
	}
	for i, m := range c.Missing {
		if !m {
			continue
		}
		k := chunkKey(c, i)
		if s, ok := n.cut[k]; !ok || c.Step[i] < s {
			n.cut[k] = c.Step[i]
		}
	}
}

// Apply returns c without the rows the policy drops (c itself when it
// drops none; nil when it drops every row), with Missing cleared and
// Censored marking the last kept row of each episode NullsTruncate cut,
// and tallies them. Every chunk must have been marked first.
func (n *NullCuts) Apply(c *Chunk) *Chunk {
	c.Missing = nil
	if len(n.cut) == 0 {
		return c
	}
	var keep []int
	var censored []bool
	dropped := false
	for i := range c.Len() {
		k := chunkKey(c, i)
		s, ok := n.cut[k]
		if !ok {
			keep = append(keep, i)
			continue
		}
		t := n.eps[k]
		if t == nil {
			t = &cutTally{}
			n.eps[k] = t
		}
		if n.policy == NullsTruncate && c.Step[i] < s {
			t.kept++
			keep = append(keep, i)
			if c.Step[i] == s-1 {
				if censored == nil {
					censored = make([]bool, c.Len())
				}
				censored[i] = true
			}
			continue
		}
		t.dropped++
		dropped = true
	}
	switch {
	case !dropped:
		c.Censored = censored
		return c
	case len(keep) == 0:
		return nil
	}
	k := c.selectRows(keep)
	if censored != nil {
		k.Censored = make([]bool, len(keep))
		for j, i := range keep {
			k.Censored[j] = censored[i]
		}
	}
	return k
}

// Counts returns what Apply removed per site, in the sites' canonical
// order (numeric for integer sites, lexical for strings), only the sites
// that lost rows; nil when none did.
func (n *NullCuts) Counts() []NullCount {
	type siteKey struct {
		i int64
		s string
	}
	per := map[siteKey]*NullCount{}
	for k, t := range n.eps {
		if t.dropped == 0 {
			continue
		}
		sk := siteKey{k.siteInt, k.siteStr}
		c := per[sk]
		if c == nil {
			name := k.siteStr
			if !n.strSites {
				name = strconv.FormatInt(k.siteInt, 10)
			}
			c = &NullCount{Site: name}
			per[sk] = c
		}
		c.Rows += t.dropped
		c.Episodes++
		if t.kept > 0 {
			c.Truncated++
		}
	}
	if len(per) == 0 {
		return nil
	}
	keys := make([]siteKey, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if n.strSites {
			return keys[a].s < keys[b].s
		}
		return keys[a].i < keys[b].i
	})
	counts := make([]NullCount, len(keys))
	for i, k := range keys {
		counts[i] = *per[k]
	}
	return counts
}

// selectRows returns a chunk of c's rows keep (increasing), with the same
// Origin: errors about its rows name the rows of the file.
func (c *Chunk) selectRows(keep []int) *Chunk {
	n := &Chunk{Src: c.Src, W: c.W}
	pick64 := func(v []int64) []int64 {
		if v == nil {
			return nil
		}
		o := make([]int64, len(keep))
		for j, i := range keep {
			o[j] = v[i]
		}
		return o
	}
	pickStr := func(v []string) []string {
		if v == nil {
			return nil
		}
		o := make([]string, len(keep))
		for j, i := range keep {
			o[j] = v[i]
		}
		return o
	}
	n.SiteInt, n.SiteStr = pick64(c.SiteInt), pickStr(c.SiteStr)
	n.TrajInt, n.TrajStr = pick64(c.TrajInt), pickStr(c.TrajStr)
	n.ActionInt, n.ActionStr = pick64(c.ActionInt), pickStr(c.ActionStr)
	n.Step = pick64(c.Step)
	n.Reward = make([]float64, len(keep))
	for j, i := range keep {
		n.Reward[j] = c.Reward[i]
	}
	if c.State != nil && c.W > 0 {
		n.State = make([]float64, 0, len(keep)*c.W)
		for _, i := range keep {
			n.State = append(n.State, c.State[i*c.W:(i+1)*c.W]...)
		}
	}
	n.offs = make([]int32, len(keep))
	for j, i := range keep {
		n.offs[j] = int32(c.at(i))
	}
	return n
}
