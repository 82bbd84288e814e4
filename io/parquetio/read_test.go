package parquetio_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// expected builds the reference Table from Go values with the Builder, so
// the reader is checked against the Builder's own view of the same rows.
func expected(t testing.TB, r rows, opts traj.Options) *traj.Table {
	t.Helper()
	ch := &traj.Chunk{Src: traj.Origin{File: "ref"}}
	for i := range r.step {
		switch v := r.site[i].(type) {
		case int:
			ch.SiteInt = append(ch.SiteInt, int64(v))
		case string:
			ch.SiteStr = append(ch.SiteStr, v)
		}
		switch v := r.traj[i].(type) {
		case int:
			ch.TrajInt = append(ch.TrajInt, int64(v))
		case string:
			ch.TrajStr = append(ch.TrajStr, v)
		}
		ch.Step = append(ch.Step, int64(r.step[i].(int)))
		switch v := r.action[i].(type) {
		case int:
			ch.ActionInt = append(ch.ActionInt, int64(v))
		case string:
			ch.ActionStr = append(ch.ActionStr, v)
		}
		ch.Reward = append(ch.Reward, r.reward[i].(float64))
		for j := range opts.State.Columns {
			ch.State = append(ch.State, r.state[j][i].(float64))
		}
	}
	ch.W = len(opts.State.Columns)
	b := traj.NewBuilder(opts)
	if err := b.Add(ch); err != nil {
		t.Fatal(err)
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestReadTypes(t *testing.T) {
	opts := stateOpts("s1", "s2")
	intRows := sampleRows(anyInts(3, 1, 12), 5, 4, 3)
	strRows := intRows
	strRows.site = anyStrings("hosp-%v", intRows.site...)
	strRows.traj = anyStrings("p%v", intRows.traj...)
	strRows.action = anyStrings("a%v", intRows.action...)
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	cases := []struct {
		name                                       string
		r                                          rows
		site, traj, step, action, reward, stateTyp arrow.DataType
	}{
		{"int64", intRows, i64, i64, i64, i64, f64, f64},
		{"int32", intRows, i32, i32, i32, i32, f64, f64},
		{"small ints", intRows, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float32},
		{"uint", intRows, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64, f64, arrow.PrimitiveTypes.Int32},
		{"strings", strRows, str, str, i32, str, f64, f64},
		{"large strings", strRows, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.LargeString, i64, arrow.BinaryTypes.LargeString, f64, f64},
		{"dictionary", strRows, dict, dict, i32, dict, f64, f64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Float32 columns round the reward; compare against the rounded values.
			r := c.r
			path := tmpPath(t, "d.parquet")
			writeParquet(t, path, 7, r.columns(c.site, c.traj, c.step, c.action, c.reward, c.stateTyp, "s1", "s2")...)
			got, err := readChecked(t, []string{path}, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := expected(t, roundFloats(r, c.reward, c.stateTyp), opts)
			equalTables(t, got, want)
			if len(got.Sources) != 1 || got.Sources[0].Path != path || got.Sources[0].Rows != int64(len(r.step)) {
				t.Errorf("sources: got %+v, want one source %s with %d rows", got.Sources, path, len(r.step))
			}
		})
	}
}

func roundFloats(r rows, reward, state arrow.DataType) rows {
	round := func(v []any) []any {
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = float64(float32(x.(float64)))
		}
		return out
	}
	if reward.ID() == arrow.FLOAT32 {
		r.reward = round(r.reward)
	}
	if state.ID() == arrow.FLOAT32 {
		r.state = [][]any{round(r.state[0]), round(r.state[1])}
	}
	return r
}

func TestReadShuffledSplit(t *testing.T) {
	opts := stateOpts("s1", "s2")
	r := sampleRows(anyInts(2, 5, 9), 30, 6, 4)
	want := expected(t, r, opts)
	perm := rand.New(rand.NewPCG(1, 2)).Perm(len(r.step))
	sh := r.permute(perm)
	dir := t.TempDir()
	var paths []string
	n := len(sh.step)
	cuts := []int{0, n / 5, n / 2, n/2 + 1, n}
	for i := 0; i+1 < len(cuts); i++ {
		p := filepath.Join(dir, "part-"+strconv.Itoa(i)+".parquet")
		writeParquet(t, p, 13, sh.slice(cuts[i], cuts[i+1]).columns(i64, i64, i32, i32, f64, f64, "s1", "s2")...)
		paths = append(paths, p)
	}
	for _, w := range []int{1, 3, 0} {
		opts := opts
		opts.Workers = w
		got, err := readChecked(t, paths, opts)
		if err != nil {
			t.Fatal(err)
		}
		equalTables(t, got, want)
		// The directory gives the same files in the same (lexical) order.
		got2, err := readChecked(t, []string{dir}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !equalSources(got.Sources, got2.Sources) {
			t.Errorf("sources: files %v, directory %v", got.Sources, got2.Sources)
		}
		got3, err := readChecked(t, []string{filepath.Join(dir, "part-*.parquet")}, opts)
		if err != nil {
			t.Fatal(err)
		}
		equalTables(t, got3, want)
	}
}

func equalSources(a, b []traj.Source) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReadEmptyAndCancel(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.parquet")
	writeParquet(t, empty, 0, sampleRows(anyInts(1), 0, 1, 1).columns(i64, i64, i32, i32, f64, f64)...)
	_, err := readChecked(t, []string{empty}, traj.Options{})
	wantErr(t, err, parquetio.ErrNoData, "no rows", empty)

	full := filepath.Join(dir, "full.parquet")
	r := sampleRows(anyInts(1, 2), 4, 3, 2)
	writeParquet(t, full, 0, r.columns(i64, i64, i32, i32, f64, f64)...)
	got, err := readChecked(t, []string{empty, full}, traj.Options{})
	if err != nil {
		t.Fatal(err)
	}
	equalTables(t, got, expected(t, r, traj.Options{}))
	if len(got.Sources) != 2 || got.Sources[0].Rows != 0 {
		t.Errorf("sources: got %+v, want the empty file first with 0 rows", got.Sources)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = parquetio.Read(ctx, []string{full}, traj.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: got %v, want context.Canceled", err)
	}
}

func TestReadNaNInf(t *testing.T) {
	r := sampleRows(anyInts(1), 3, 3, 2)
	r.reward[4] = math.NaN()
	path := tmpPath(t, "nan.parquet")
	writeParquet(t, path, 0, r.columns(i64, i64, i32, i32, f64, f64)...)
	_, err := readChecked(t, []string{path}, traj.Options{})
	wantErr(t, err, parquetio.ErrBadData, path, "row 4", `column "reward"`, "NaN")
	_ = os.Remove(path)
}

type countProgress struct {
	mu         sync.Mutex
	total, add int64
}

func (p *countProgress) SetTotal(n int64) { p.mu.Lock(); p.total = n; p.mu.Unlock() }
func (p *countProgress) Add(n int64)      { p.mu.Lock(); p.add += n; p.mu.Unlock() }

func TestReadProgressAndFingerprint(t *testing.T) {
	r := sampleRows(anyInts(1, 2), 10, 3, 2)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	writeParquet(t, a, 5, r.slice(0, 10).columns(i64, i64, i32, i32, f64, f64)...)
	writeParquet(t, b, 5, r.slice(10, len(r.step)).columns(i64, i64, i32, i32, f64, f64)...)
	p := &countProgress{}
	got, err := readChecked(t, []string{a, b}, traj.Options{Progress: p, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if n := int64(len(r.step)); p.total != n || p.add != n {
		t.Errorf("progress: total %d, added %d, want %d and %d", p.total, p.add, n, n)
	}
	// The fingerprint is SHA-256 of the decimal size and the footer.
	for i, path := range []string{a, b} {
		data, _ := os.ReadFile(path)
		n := len(data)
		flen := int(binary.LittleEndian.Uint32(data[n-8 : n-4]))
		h := sha256.Sum256(append([]byte(strconv.Itoa(n)), data[n-8-flen:n-8]...))
		src := got.Sources[i]
		if src.Path != path || src.Size != int64(n) || src.Fingerprint != hex.EncodeToString(h[:]) {
			t.Errorf("source %d: got %+v, want path %s, size %d, fingerprint %x", i, src, path, n, h)
		}
	}
}
