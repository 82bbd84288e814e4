package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
)

// applySummary is the JSON of `grmdp apply --json`: what the policy
// recommends on the data, overall and per site.
type applySummary struct {
	Output string `json:"output"`
	applyCounts
	// Sites holds the same per site, in site order (numeric when every
	// site is an integer, lexical otherwise); empty when the data have no
	// site column.
	Sites []applySite `json:"sites"`
}

type applySite struct {
	Site string `json:"site"`
	applyCounts
}

// applyCounts summarises a set of annotated rows.
type applyCounts struct {
	Rows int64 `json:"rows"`
	// Recommended counts the rows per recommended action, in the policy's
	// action order.
	Recommended []actionCount `json:"recommended"`
	// Agreement is the share of the rows with a recorded action whose
	// recommended action equals it; null when the data have no action
	// column or no row records one.
	Agreement *float64 `json:"agreement"`
	// NoEvidence is the share of rows whose decision has no evidence (every
	// action's Qhat is 0) and follows the fallback.
	NoEvidence float64 `json:"no_evidence"`

	recorded, agree, noev int64
	byAction              map[string]int64
}

type actionCount struct {
	Action string `json:"action"`
	Rows   int64  `json:"rows"`
}

func (c *applyCounts) add(rec string, hasRec bool, recorded string, ev bool) {
	c.Rows++
	if c.byAction == nil {
		c.byAction = map[string]int64{}
	}
	if _, ok := c.byAction[rec]; !ok {
		rec = strings.Clone(rec) // it may point into a batch's buffer
	}
	c.byAction[rec]++
	if hasRec {
		c.recorded++
		if recorded == rec {
			c.agree++
		}
	}
	if !ev {
		c.noev++
	}
}

// finish fills the shares and the per-action list.
func (c *applyCounts) finish(labels []string) {
	c.Recommended = []actionCount{}
	for _, l := range labels {
		c.Recommended = append(c.Recommended, actionCount{Action: l, Rows: c.byAction[l]})
	}
	if c.recorded > 0 {
		a := float64(c.agree) / float64(c.recorded)
		c.Agreement = &a
	}
	if c.Rows > 0 {
		c.NoEvidence = float64(c.noev) / float64(c.Rows)
	}
}

// summarizeApplied reads the annotated file apply wrote (its site, action,
// recommended_action and evidence columns) and summarises it. Actions are
// compared as text, so an integer action column of any width matches the
// policy's int32 recommendations, and string actions their labels.
func summarizeApplied(ctx context.Context, path, siteCol, actionCol string, p *solve.Policy) (*applySummary, error) {
	fr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the output back: %w", path, err)
	}
	defer fr.Close()
	ar, err := pqarrow.NewFileReader(fr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the output back: %w", path, err)
	}
	sc := fr.MetaData().Schema
	names := []string{parquetio.ColRecommendedAction, parquetio.ColEvidence, actionCol, siteCol}
	var cols []int
	pos := make([]int, len(names)) // position in the record, -1 when absent
	for i, n := range names {
		pos[i] = -1
		if j := sc.ColumnIndexByName(n); j >= 0 && !slices.Contains(cols, j) {
			pos[i] = len(cols)
			cols = append(cols, j)
		}
	}
	if pos[0] < 0 || pos[1] < 0 {
		return nil, fmt.Errorf("%s: the output lacks the %s and %s columns", path, parquetio.ColRecommendedAction, parquetio.ColEvidence)
	}
	rr, err := ar.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the output back: %w", path, err)
	}
	defer rr.Release()
	all := &applySummary{Output: path}
	bySite := map[string]*applySite{}
	for rr.Next() {
		rec := rr.RecordBatch()
		n := int(rec.NumRows())
		recCol := textOf(rec.Column(pos[0]))
		evCol := rec.Column(pos[1]).(*array.Boolean)
		var actArr, siteArr arrow.Array
		var actCol, siteCol func(int) string
		if pos[2] >= 0 {
			actArr = rec.Column(pos[2])
			actCol = textOf(actArr)
		}
		if pos[3] >= 0 {
			siteArr = rec.Column(pos[3])
			siteCol = textOf(siteArr)
		}
		for i := 0; i < n; i++ {
			r := recCol(i)
			ev := evCol.Value(i)
			recorded, has := "", false
			if actArr != nil && actArr.IsValid(i) {
				recorded, has = actCol(i), true
			}
			all.add(r, has, recorded, ev)
			if siteArr != nil {
				s := siteCol(i)
				st := bySite[s]
				if st == nil {
					s = strings.Clone(s)
					st = &applySite{Site: s}
					bySite[s] = st
				}
				st.add(r, has, recorded, ev)
			}
		}
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: cannot read the output back: %w", path, err)
	}
	labels := actionLabels(p)
	all.finish(labels)
	all.Sites = []applySite{}
	for _, s := range sortedSites(bySite) {
		st := bySite[s]
		st.finish(labels)
		all.Sites = append(all.Sites, *st)
	}
	return all, nil
}

// textOf returns a's values as text, as ValueStr gives them, without a
// new string per row: strings are read in place, a dictionary's values
// and integers are formatted once per distinct value.
func textOf(a arrow.Array) func(int) string {
	switch v := a.(type) {
	case *array.String:
		return v.Value
	case *array.LargeString:
		return v.Value
	case *array.Dictionary:
		dict := v.Dictionary()
		vals := make([]string, dict.Len())
		for j := range vals {
			vals[j] = dict.ValueStr(j)
		}
		return func(i int) string { return vals[v.GetValueIndex(i)] }
	}
	var ints func(int) int64
	switch v := a.(type) {
	case *array.Int8:
		ints = func(i int) int64 { return int64(v.Value(i)) }
	case *array.Int16:
		ints = func(i int) int64 { return int64(v.Value(i)) }
	case *array.Int32:
		ints = func(i int) int64 { return int64(v.Value(i)) }
	case *array.Int64:
		ints = v.Value
	default:
		return a.ValueStr
	}
	seen := map[int64]string{}
	return func(i int) string {
		x := ints(i)
		s, ok := seen[x]
		if !ok {
			s = strconv.FormatInt(x, 10)
			seen[x] = s
		}
		return s
	}
}

// sortedSites returns the sites in numeric order when every one is an
// integer, lexical order otherwise.
func sortedSites[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	numeric := true
	for s := range m {
		out = append(out, s)
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			numeric = false
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if numeric {
			x, _ := strconv.ParseInt(a, 10, 64)
			y, _ := strconv.ParseInt(b, 10, 64)
			return cmp.Compare(x, y)
		}
		return cmp.Compare(a, b)
	})
	return out
}
