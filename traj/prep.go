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
	// later row of its episode are dropped. An episode left with no rows
	// is dropped.
	NullsTruncate
	// NullsDropEpisode drops every row of the row's episode.
	NullsDropEpisode
)

// NullPolicies names the policies in the order of their values, as the
// --nulls flag spells them.
var NullPolicies = []string{"error", "truncate", "drop-episode"}

func (p NullPolicy) String() string {
	if int(p) < len(NullPolicies) {
		return NullPolicies[p]
	}
	return "NullPolicy(" + strconv.Itoa(int(p)) + ")"
}

// ParseNullPolicy parses a --nulls value.
func ParseNullPolicy(s string) (NullPolicy, error) {
	for i, n := range NullPolicies {
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
// and the counts per site, in the sites' canonical order (numeric for
// integer sites, lexical for strings), only sites that lost rows.
//
// An episode's first NULL is its smallest step with a missing value; the
// result depends on the rows' content only, not on the chunks' order or
// sizes.
func DropMissing(chunks []*Chunk, policy NullPolicy) ([]*Chunk, []NullCount) {
	cut := map[episodeKey]int64{} // per episode with a NULL: its first NULL's step
	for _, c := range chunks {
		for i, m := range c.Missing {
			if !m {
				continue
			}
			k := chunkKey(c, i)
			if s, ok := cut[k]; !ok || c.Step[i] < s {
				cut[k] = c.Step[i]
			}
		}
	}
	if len(cut) == 0 {
		for _, c := range chunks {
			c.Missing = nil
		}
		return chunks, nil
	}
	type tally struct {
		kept, dropped int
	}
	eps := map[episodeKey]*tally{}
	for k := range cut {
		eps[k] = &tally{}
	}
	out := make([]*Chunk, 0, len(chunks))
	for _, c := range chunks {
		var keep []int
		dropped := false
		for i := range c.Len() {
			k := chunkKey(c, i)
			s, ok := cut[k]
			if !ok {
				keep = append(keep, i)
				continue
			}
			t := eps[k]
			if policy == NullsTruncate && c.Step[i] < s {
				t.kept++
				keep = append(keep, i)
				continue
			}
			t.dropped++
			dropped = true
		}
		c.Missing = nil
		if !dropped {
			out = append(out, c)
			continue
		}
		if len(keep) > 0 {
			out = append(out, c.selectRows(keep))
		}
	}
	// The counts per site.
	type siteKey struct {
		i int64
		s string
	}
	per := map[siteKey]*NullCount{}
	strSites := chunks[0].SiteStr != nil
	for k, t := range eps {
		sk := siteKey{k.siteInt, k.siteStr}
		n := per[sk]
		if n == nil {
			name := k.siteStr
			if !strSites {
				name = strconv.FormatInt(k.siteInt, 10)
			}
			n = &NullCount{Site: name}
			per[sk] = n
		}
		n.Rows += t.dropped
		n.Episodes++
		if t.kept > 0 {
			n.Truncated++
		}
	}
	keys := make([]siteKey, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if strSites {
			return keys[a].s < keys[b].s
		}
		return keys[a].i < keys[b].i
	})
	counts := make([]NullCount, len(keys))
	for i, k := range keys {
		counts[i] = *per[k]
	}
	return out, counts
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
