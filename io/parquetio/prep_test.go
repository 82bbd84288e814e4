package parquetio_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// bare drops what a read learned about the preparation (the null counts
// and the detected first step) besides the sources, for comparing tables.
func bare(t *traj.Table) *traj.Table {
	c := *t
	c.Nulls, c.ZeroStepFile = nil, ""
	// The censoring of --nulls truncate (Table.Censored and the weights 0
	// of censored episodes' last rows), which a table of rows without
	// NULLs cannot have: TestReadNullPolicies counts it per site, and
	// traj's tests check it row by row.
	if c.Censored != nil {
		c.Censored = nil
		c.Steps = append([]traj.Step(nil), t.Steps...)
		for h := range c.Steps {
			c.Steps[h].Weight = nil
		}
	}
	return &c
}

// shiftSteps returns r with every step decreased by 1 (numbered from 0).
func shiftSteps(r rows) rows {
	out := r
	out.step = make([]any, len(r.step))
	for i, h := range r.step {
		out.step[i] = h.(int) - 1
	}
	return out
}

// TestReadFirstStep checks that steps numbered from 0 are read as 1..H,
// the same table as the data numbered from 1, whether detected (from the
// footer's statistics or, without them, the step column) or set; that
// detection names the file; that StepsFrom1 keeps the step-0 error, which
// names the flag; and that StepsFrom0 names a negative step as the data
// number it.
func TestReadFirstStep(t *testing.T) {
	r := sampleRows(anyInts(1, 2, 3), 4, 3, 2)
	opts := stateOpts("s1", "s2")
	want := expected(t, r, opts)
	for _, stats := range []bool{true, false} {
		path := tmpPath(t, fmt.Sprintf("zero-%v.parquet", stats))
		writeParquetWith(t, path, 5, []parquet.WriterProperty{parquet.WithStats(stats)},
			shiftSteps(r).columns(i64, i64, i32, i32, f64, f64, "s1", "s2")...)
		for _, fs := range []traj.FirstStep{traj.StepsDetect, traj.StepsFrom0} {
			o := opts
			o.FirstStep = fs
			got, err := readChecked(t, []string{path}, o)
			if err != nil {
				t.Fatalf("stats %v, first step %v: %v", stats, fs, err)
			}
			equalTables(t, bare(got), want)
			if wantFile := map[traj.FirstStep]string{traj.StepsDetect: path}[fs]; got.ZeroStepFile != wantFile {
				t.Errorf("stats %v, first step %v: ZeroStepFile %q, want %q", stats, fs, got.ZeroStepFile, wantFile)
			}
		}
		o := opts
		o.FirstStep = traj.StepsFrom1
		_, err := readChecked(t, []string{path}, o)
		wantErr(t, err, traj.ErrStepZero, path, `column "step"`, "step 0 is below 1: steps are numbered 1..H")
	}
	// Data numbered from 1: detection changes nothing.
	path := tmpPath(t, "one.parquet")
	writeParquet(t, path, 5, r.columns(i64, i64, i32, i32, f64, f64, "s1", "s2")...)
	o := opts
	o.FirstStep = traj.StepsDetect
	got, err := readChecked(t, []string{path}, o)
	if err != nil {
		t.Fatal(err)
	}
	if got.ZeroStepFile != "" {
		t.Errorf("steps from 1 detected as from 0 in %s", got.ZeroStepFile)
	}
	equalTables(t, got, want)
	// A step -1 in data numbered from 0.
	neg := shiftSteps(r)
	neg.step[7] = -1
	path = tmpPath(t, "neg.parquet")
	writeParquet(t, path, 5, neg.columns(i64, i64, i32, i32, f64, f64, "s1", "s2")...)
	o.FirstStep = traj.StepsFrom0
	_, err = readChecked(t, []string{path}, o)
	wantErr(t, err, parquetio.ErrBadData, path, "row 7", "step -1 is below 0: steps numbered from 0 are 0..H-1")
}

// nullCase puts nulls into rows of sampleRows and says which rows each
// policy keeps.
type nullCase struct {
	col  int // 3 action, 4 reward, 5+j state column j
	site any
	traj int
	step int
}

// TestReadNullPolicies puts NULLs at the first, a middle and the last step
// of episodes of several sites, in the action, the reward and a state
// column (two in one episode), in row groups of 4 rows so that episodes
// span row groups, and checks that truncate and drop-episode give exactly
// the table of the data with the rows removed by hand (for truncate: the
// episode's rows from its first NULL's step on; for drop-episode: all its
// rows), the counts per site, and the same for 1 and 4 workers.
func TestReadNullPolicies(t *testing.T) {
	r := sampleRows(anyInts(1, 2, 3), 5, 4, 3)
	// Episode lengths cycle 1..4 (sampleRows): traj 100+tr of the k-th site
	// has 1+(tr+k)%4 steps.
	nulls := []nullCase{
		{col: 3, site: 1, traj: 103, step: 1}, // first step (length 4): dropped whole
		{col: 5, site: 1, traj: 102, step: 2}, // middle (length 3)
		{col: 4, site: 2, traj: 102, step: 4}, // last step (length 4)
		{col: 6, site: 3, traj: 101, step: 3}, // two in one episode (length 4): the earlier counts
		{col: 4, site: 3, traj: 101, step: 4},
		{col: 3, site: 3, traj: 100, step: 2}, // middle (length 3)
	}
	rowOf := func(site any, tr, step int) int {
		for i := range r.step {
			if r.site[i] == site && r.traj[i] == tr && r.step[i] == step {
				return i
			}
		}
		t.Fatalf("no row for site %v traj %d step %d", site, tr, step)
		return -1
	}
	cols := r.columns(i64, i64, i32, str, f64, f64, "s1", "s2")
	cols[3].vals = anyStrings("a%v", r.action...) // string actions
	for i := range cols {
		cols[i].nullable = true
		cols[i].vals = append([]any(nil), cols[i].vals...)
	}
	cut := map[[2]int]int{}
	for _, n := range nulls {
		cols[n.col].vals[rowOf(n.site, n.traj, n.step)] = nil
		k := [2]int{n.site.(int), n.traj}
		if s, ok := cut[k]; !ok || n.step < s {
			cut[k] = n.step
		}
	}
	path := tmpPath(t, "nulls.parquet")
	writeParquet(t, path, 4, cols...)

	opts := stateOpts("s1", "s2")
	// Without a policy: today's error, now naming the flag.
	_, err := readChecked(t, []string{path}, opts)
	wantErr(t, err, traj.ErrNull, path, "null value", "impute such rows")

	for _, policy := range []traj.NullPolicy{traj.NullsTruncate, traj.NullsDropEpisode} {
		var keep []int
		wantCounts := map[string]*traj.NullCount{}
		type ep struct{ kept, dropped int }
		eps := map[[2]int]*ep{}
		for i := range r.step {
			k := [2]int{r.site[i].(int), r.traj[i].(int)}
			s, ok := cut[k]
			if !ok {
				keep = append(keep, i)
				continue
			}
			if eps[k] == nil {
				eps[k] = &ep{}
			}
			if policy == traj.NullsTruncate && r.step[i].(int) < s {
				keep = append(keep, i)
				eps[k].kept++
			} else {
				eps[k].dropped++
			}
		}
		for k, e := range eps {
			site := fmt.Sprint(k[0])
			if wantCounts[site] == nil {
				wantCounts[site] = &traj.NullCount{Site: site}
			}
			c := wantCounts[site]
			c.Rows += e.dropped
			c.Episodes++
			if e.kept > 0 {
				c.Truncated++
			}
		}
		hand := r.permute(keep)
		hand.action = anyStrings("a%v", hand.action...)
		want := expected(t, hand, opts)
		var first *traj.Table
		for _, w := range []int{1, 4} {
			o := opts
			o.Nulls, o.Workers = policy, w
			got, err := readChecked(t, []string{path}, o)
			if err != nil {
				t.Fatalf("%v, %d workers: %v", policy, w, err)
			}
			equalTables(t, bare(got), want)
			if first == nil {
				first = got
			} else if !reflect.DeepEqual(first, got) {
				t.Errorf("%v: 1 and 4 workers read different tables", policy)
			}
			var wc []traj.NullCount
			for _, s := range []string{"1", "2", "3"} {
				if c := wantCounts[s]; c != nil {
					wc = append(wc, *c)
				}
			}
			if !reflect.DeepEqual(got.Nulls, wc) {
				t.Errorf("%v: counts %+v, want %+v", policy, got.Nulls, wc)
			}
			// Truncated episodes are the censored ones.
			cens := got.CensoredCount()
			for k, s := range got.Sites {
				want := 0
				if c := wantCounts[s]; c != nil && policy == traj.NullsTruncate {
					want = c.Truncated
				}
				n := 0
				if cens != nil {
					n = cens[k]
				}
				if n != want {
					t.Errorf("%v: site %s: %d censored episodes, want %d", policy, s, n, want)
				}
			}
		}
	}
}

// TestReadNullKeyColumns checks that a NULL in the site, traj or step
// column stays an error under a null policy, with today's message.
func TestReadNullKeyColumns(t *testing.T) {
	r := small()
	for j, name := range []string{"site", "traj", "step"} {
		cs := r.columns(i64, i64, i32, i32, f64, f64, "s1", "s2")
		for i := range cs {
			cs[i].nullable = true
			cs[i].vals = append([]any(nil), cs[i].vals...)
		}
		cs[j].vals[5] = nil
		path := tmpPath(t, name+".parquet")
		writeParquet(t, path, 4, cs...)
		o := stateOpts("s1", "s2")
		o.Nulls = traj.NullsTruncate
		_, err := readChecked(t, []string{path}, o)
		wantErr(t, err, parquetio.ErrBadData, path, `column "`+name+`"`, "null value", "drop or impute such rows")
	}
}

// decimals writes v (decimal strings) as a decimal(p,s) column.
func decimals(name string, p, s int32, v []any) column {
	return column{name: name, typ: &arrow.Decimal128Type{Precision: p, Scale: s}, vals: v}
}

// TestReadDecimal writes the reward, the state columns, the steps, the
// trajectory ids and the actions as DECIMAL columns, stored as INT32,
// INT64 and FIXED_LEN_BYTE_ARRAY (arrow-go's choices by precision, with and
// without StoreDecimalAsInteger), and checks that they read as the same
// table as the float and integer columns: each value the float64 nearest
// the decimal (1.10 reads as 1.1). A step that is not a whole number is an
// error naming the row.
func TestReadDecimal(t *testing.T) {
	r := sampleRows(anyStrings("site%v", 1, 2), 4, 3, 2)
	// Rewards and states with two decimals.
	for i := range r.reward {
		r.reward[i] = float64((i*37)%101) / 100
		r.state[0][i] = float64((i*53)%1000+1) / 100
		r.state[1][i] = -float64((i*29)%700) / 100
	}
	dec := func(v []any, scale int) []any {
		out := make([]any, len(v))
		for i, x := range v {
			switch x := x.(type) {
			case int:
				out[i] = fmt.Sprintf("%d.%s", x, strings.Repeat("0", scale))[:len(fmt.Sprint(x))+1+scale]
				if scale == 0 {
					out[i] = fmt.Sprint(x)
				}
			case float64:
				out[i] = fmt.Sprintf("%.*f", scale, x)
			}
		}
		return out
	}
	opts := stateOpts("s1", "s2")
	want := expected(t, r, opts)
	for _, asInt := range []bool{true, false} {
		for _, prec := range []int32{6, 15, 30} {
			cols := []column{
				col("site", str, r.site...),
				decimals("traj", max(prec, 5), 0, dec(r.traj, 0)),
				decimals("step", max(prec, 4), 2, dec(r.step, 2)),
				decimals("action", max(prec, 3), 0, dec(r.action, 0)),
				decimals("reward", prec, 2, dec(r.reward, 2)),
				decimals("s1", prec, 2, dec(r.state[0], 2)),
				decimals("s2", prec+2, 4, dec(r.state[1], 4)),
			}
			path := tmpPath(t, fmt.Sprintf("dec-%v-%d.parquet", asInt, prec))
			writeParquetWith(t, path, 5, []parquet.WriterProperty{parquet.WithStoreDecimalAsInteger(asInt)}, cols...)
			got, err := readChecked(t, []string{path}, opts)
			if err != nil {
				t.Fatalf("int storage %v, precision %d: %v", asInt, prec, err)
			}
			equalTables(t, got, want)
		}
	}
	// 1.10 reads as the float64 nearest 1.1.
	path := tmpPath(t, "one-ten.parquet")
	cs := small().columns(i64, i64, i32, i32, f64, f64, "s1", "s2")
	v := make([]any, len(cs[5].vals))
	for i := range v {
		v[i] = "1.10"
	}
	cs[5] = decimals("s1", 6, 2, v)
	writeParquetWith(t, path, 0, []parquet.WriterProperty{parquet.WithStoreDecimalAsInteger(true)}, cs...)
	got, err := readChecked(t, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Steps[0].State[0]; s != 1.1 {
		t.Errorf("1.10 read as %v, want 1.1", s)
	}
	// A step that is not whole.
	bad := small()
	cs = bad.columns(i64, i64, i32, i32, f64, f64, "s1", "s2")
	cs[2] = decimals("step", 6, 2, dec(bad.step, 2))
	cs[2].vals[6] = "1.50"
	path = tmpPath(t, "half-step.parquet")
	writeParquet(t, path, 4, cs...)
	_, err = readChecked(t, []string{path}, opts)
	wantErr(t, err, parquetio.ErrBadData, path, "row group 1, row 6", `column "step"`, "decimal value 1.50 is not a whole number")
}

// TestReadFirstStepHorizon checks that a step beyond --horizon in data
// numbered from 0 is named as the data number it, and as read.
func TestReadFirstStepHorizon(t *testing.T) {
	r := shiftSteps(sampleRows(anyInts(1, 2), 3, 3, 2))
	path := tmpPath(t, "h.parquet")
	writeParquet(t, path, 0, r.columns(i64, i64, i32, i32, f64, f64, "s1", "s2")...)
	o := stateOpts("s1", "s2")
	o.FirstStep, o.Horizon = traj.StepsDetect, 2
	_, err := readChecked(t, []string{path}, o)
	wantErr(t, err, parquetio.ErrBadData, path, "step 2 (read as 3, the steps numbered from 0) is beyond the horizon H = 2")
}
