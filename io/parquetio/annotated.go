package parquetio

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// AnnotatedRow is one row of a file Annotate wrote, as text: its site
// (HasSite false when the file has no site column), its recommended
// action, its recorded action (HasRecorded false when the file has no
// action column or the row's is NULL) and its evidence flag. The strings
// may point into a batch's buffer: clone one to keep it past the call.
type AnnotatedRow struct {
	Site, Recommended, Recorded string
	HasSite, HasRecorded        bool
	Evidence                    bool
	// Scored is false for a row Annotate left without a recommendation
	// (its recommendation_note says why).
	Scored bool
}

// ReadAnnotated reads the site, action, recommended_action and evidence
// columns of a file Annotate wrote and calls fn for every row, in file
// order. A row without a recommendation (a NULL recommended_action, under
// a null policy) has Scored false and Recommended "". Actions are given as text, so an integer action column of any
// width compares equal to the policy's recommendations, and string
// actions to their labels.
func ReadAnnotated(ctx context.Context, path, siteCol, actionCol string, fn func(r *AnnotatedRow)) error {
	fr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("%s: cannot read the output back: %w", path, err)
	}
	defer fr.Close()
	ar, err := pqarrow.NewFileReader(fr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%s: cannot read the output back: %w", path, err)
	}
	sc := fr.MetaData().Schema
	names := []string{ColRecommendedAction, ColEvidence, actionCol, siteCol}
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
		return fmt.Errorf("%s: the output lacks the %s and %s columns", path, ColRecommendedAction, ColEvidence)
	}
	rr, err := ar.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return fmt.Errorf("%s: cannot read the output back: %w", path, err)
	}
	defer rr.Release()
	var row AnnotatedRow
	for rr.Next() {
		rec := rr.RecordBatch()
		n := int(rec.NumRows())
		recArr := rec.Column(pos[0])
		recCol := textOf(recArr)
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
		row.HasSite = siteArr != nil
		for i := 0; i < n; i++ {
			row.Recommended, row.Evidence, row.Scored = "", false, recArr.IsValid(i)
			if row.Scored {
				row.Recommended, row.Evidence = recCol(i), evCol.Value(i)
			}
			row.Recorded, row.HasRecorded = "", false
			if actArr != nil && actArr.IsValid(i) {
				row.Recorded, row.HasRecorded = actCol(i), true
			}
			if siteArr != nil {
				row.Site = siteCol(i)
			}
			fn(&row)
		}
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("%s: cannot read the output back: %w", path, err)
	}
	return nil
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
