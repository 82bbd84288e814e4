package parquetio_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// fuzzRows decodes rows for FuzzBuild: 6 bytes per row give site, traj,
// step, action, reward and the two state values, each from a small set
// that includes the values the contract rejects (step 0, negative actions,
// NaN, Inf, rewards outside [0,1], negative or all-zero states).
func fuzzRows(data []byte, strSites bool) *traj.Chunk {
	rewards := []float64{0, 0.25, 0.5, 1, -0.5, 1.5, math.NaN(), math.Inf(1)}
	states := []float64{0, 1, 2, 0.5, 3, -1, math.NaN(), math.Inf(-1)}
	c := &traj.Chunk{W: 2, TrajInt: []int64{}, Step: []int64{}, ActionInt: []int64{}, Reward: []float64{}, State: []float64{}}
	if strSites {
		c.SiteStr = []string{}
	} else {
		c.SiteInt = []int64{}
	}
	for len(data) >= 6 {
		r := data[:6]
		data = data[6:]
		if strSites {
			c.SiteStr = append(c.SiteStr, []string{"a", "b", "c"}[r[0]%3])
		} else {
			c.SiteInt = append(c.SiteInt, int64(r[0]%3)*7-3)
		}
		c.TrajInt = append(c.TrajInt, int64(r[1]%6))
		c.Step = append(c.Step, int64(int8(r[2]))%8)
		c.ActionInt = append(c.ActionInt, int64(int8(r[3]))%5)
		c.Reward = append(c.Reward, rewards[r[4]%8])
		c.State = append(c.State, states[r[5]%8], states[(r[5]>>3)%8])
	}
	return c
}

// FuzzBuild feeds arbitrary rows, in arbitrary chunks, to the contract
// validator (Builder). It must never panic; an error must wrap a sentinel;
// a table must satisfy the contract (rewards in [0,1], actions in 0..A-1,
// nonnegative nonzero states, episodes linked step to step without gaps)
// and must not depend on how the rows were split into chunks or ordered.
// FuzzRead (fuzz_test.go) fuzzes the Parquet bytes in front of it.
func FuzzBuild(f *testing.F) {
	good := []byte{
		0, 0, 1, 0, 1, 1, 0, 0, 2, 1, 2, 9, 1, 0, 1, 2, 3, 2,
		1, 1, 1, 1, 0, 3, 2, 0, 1, 0, 1, 1, 2, 0, 2, 1, 2, 4,
	}
	f.Add(good, uint8(0), uint8(0), uint8(0), false)
	f.Add(good, uint8(3), uint8(2), uint8(2), true)
	f.Add(append(good, 0, 0, 2, 0, 1, 1), uint8(0), uint8(0), uint8(1), false) // duplicate
	f.Add(append(good, 0, 3, 2, 0, 1, 1), uint8(0), uint8(0), uint8(1), false) // gap
	f.Add(append(good, 0, 4, 1, 0, 6, 1), uint8(0), uint8(0), uint8(1), false) // NaN reward
	f.Add([]byte{}, uint8(0), uint8(0), uint8(0), false)
	f.Fuzz(func(t *testing.T, data []byte, horizon, actions, split uint8, strSites bool) {
		if len(data) > 6*512 {
			return
		}
		rows := fuzzRows(data, strSites)
		opts := traj.Options{State: traj.StateSpec{Columns: []string{"s1", "s2"}, NonzeroSum: true},
			Horizon: int(horizon % 6), Actions: int(actions % 5)}
		build := func(chunks []*traj.Chunk) (*traj.Table, error) {
			b := traj.NewBuilder(opts)
			for i, c := range chunks {
				c.Src = traj.Origin{File: "f.parquet", RowGroup: i, Row: int64(i)}
				if err := b.Add(c); err != nil {
					return nil, err
				}
			}
			return b.Build()
		}
		// The rows in chunks of split+1 rows.
		n := rows.Len()
		size := int(split%7) + 1
		var chunks []*traj.Chunk
		for lo := 0; lo < n || lo == 0; lo += size {
			idx := []int{}
			for i := lo; i < min(lo+size, n); i++ {
				idx = append(idx, i)
			}
			chunks = append(chunks, rows.Select(idx))
			if n == 0 {
				break
			}
		}
		tb, err := build(chunks)
		if err != nil {
			if !errors.Is(err, parquetio.ErrBadData) && !errors.Is(err, parquetio.ErrSchema) && !errors.Is(err, parquetio.ErrNoData) {
				t.Fatalf("error %q wraps no sentinel", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q spans lines", err)
			}
			return
		}
		checkContract(t, tb, n)
		// The same rows in one chunk, in reverse order, give the same table.
		rev := make([]int, n)
		for i := range rev {
			rev[i] = n - 1 - i
		}
		tb2, err := build([]*traj.Chunk{rows.Select(rev)})
		if err != nil {
			t.Fatalf("the rows in reverse order fail: %v", err)
		}
		if !reflect.DeepEqual(tb, tb2) {
			t.Fatalf("the table depends on the order and chunking of the rows")
		}
	})
}

// checkContract checks a built table against the trajectory contract.
func checkContract(t *testing.T, tb *traj.Table, rows int) {
	t.Helper()
	if tb.Rows != rows {
		t.Fatalf("table has %d rows, want %d", tb.Rows, rows)
	}
	total := 0
	for h := range tb.Steps {
		st := &tb.Steps[h]
		total += st.Len()
		if len(st.SiteStart) != len(tb.Sites)+1 || st.SiteStart[0] != 0 || int(st.SiteStart[len(tb.Sites)]) != st.Len() {
			t.Fatalf("step %d: bad site offsets %v for %d rows", h+1, st.SiteStart, st.Len())
		}
		for j := range st.Len() {
			if r := st.Reward[j]; !(r >= 0 && r <= 1) {
				t.Fatalf("step %d row %d: reward %v outside [0,1]", h+1, j, r)
			}
			if a := st.Action[j]; a < 0 || int(a) >= tb.A {
				t.Fatalf("step %d row %d: action %d outside 0..%d", h+1, j, a, tb.A-1)
			}
			sum := 0.0
			for _, v := range st.State[j*tb.W : (j+1)*tb.W] {
				if !(v >= 0) || math.IsInf(v, 0) {
					t.Fatalf("step %d row %d: state value %v", h+1, j, v)
				}
				sum += v
			}
			if sum == 0 {
				t.Fatalf("step %d row %d: all-zero state", h+1, j)
			}
			if nx := st.Next[j]; nx >= 0 {
				if h+1 >= len(tb.Steps) || int(nx) >= tb.Steps[h+1].Len() || tb.Steps[h+1].Traj[nx] != st.Traj[j] {
					t.Fatalf("step %d row %d: next %d does not continue trajectory %d", h+1, j, nx, st.Traj[j])
				}
			}
		}
	}
	if total != rows {
		t.Fatalf("steps hold %d rows, want %d", total, rows)
	}
	n := 0
	for _, k := range tb.Trajectories {
		n += k
	}
	if len(tb.Steps) > 0 && n != tb.Steps[0].Len() {
		t.Fatalf("%d trajectories counted, %d start at step 1", n, tb.Steps[0].Len())
	}
}
