package policyio_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/io/policyio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// policies solves a small benchmark data set with Algorithm 1 (site-wise,
// with the behaviour table as fallback) and with PEVI (whose rows carry
// Lambda^{-1}), so that every kind of artifact row is written.
func policies(t *testing.T) []*solve.Policy {
	t.Helper()
	m, err := sim.NewBenchmark(sim.Params{Seed: 1, Trajectories: []int{60, 40, 50}, Horizon: 3})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := m.Sample(7)
	if err != nil {
		t.Fatal(err)
	}
	fm := m.Map()
	ctx := context.Background()
	st, err := solve.NewStats(ctx, tb, fm, solve.BlocksFor(tb, &fm), 1)
	if err != nil {
		t.Fatal(err)
	}
	sv := solve.NewSolver(st, solve.DefaultSettings)
	var out []*solve.Policy
	for _, method := range []solve.Method{solve.Sitewise, solve.PEVIAvg, solve.Behaviour} {
		p, err := sv.Solve(ctx, solve.Problem{Method: method})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestRoundTrip checks that Write stores exactly the policy's artifact rows
// and metadata, byte for byte as parquetio.WritePolicy writes them, and
// that Read gives back a policy with the same artifact.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, p := range policies(t) {
		path := filepath.Join(dir, string(p.Method)+".parquet")
		if err := policyio.Write(path, p); err != nil {
			t.Fatal(err)
		}
		rows, meta, err := p.ArtifactRows()
		if err != nil {
			t.Fatal(err)
		}
		direct := make([]parquetio.PolicyRow, len(rows))
		for i, r := range rows {
			direct[i] = parquetio.PolicyRow{Step: r.Step, Group: r.Group, W: r.W, M: r.M, Linv: r.Linv, Fallback: r.Fallback}
		}
		ref := filepath.Join(dir, "ref.parquet")
		if err := parquetio.WritePolicy(ref, direct, meta); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		want, _ := os.ReadFile(ref)
		if len(got) == 0 || !bytes.Equal(got, want) {
			t.Fatalf("%s: Write gives %d bytes that differ from parquetio.WritePolicy's %d", p.Method, len(got), len(want))
		}
		back, err := policyio.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		rows2, meta2, err := back.ArtifactRows()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rows2, rows) || !reflect.DeepEqual(meta2, meta) {
			t.Errorf("%s: the policy read back has another artifact", p.Method)
		}
	}
}

// TestReadErrors checks that a Parquet file that is not a policy gives
// parquetio's schema error, and a policy file whose content grmdp cannot
// use gives solve's, each naming the file.
func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := policyio.Read(filepath.Join(dir, "none.parquet")); err == nil {
		t.Error("a missing file gives no error")
	}
	trajectories := filepath.Join("..", "parquetio", "testdata", "duckdb_trajectories.parquet")
	if _, err := policyio.Read(trajectories); !errors.Is(err, parquetio.ErrSchema) {
		t.Errorf("a trajectory file: %v, want parquetio.ErrSchema", err)
	}
	notPolicy := filepath.Join(dir, "rows.parquet")
	if err := parquetio.WritePolicy(notPolicy, nil, nil); err != nil {
		t.Fatal(err)
	}
	_, err := policyio.Read(notPolicy)
	if !errors.Is(err, solve.ErrBadPolicy) || !bytes.Contains([]byte(err.Error()), []byte(notPolicy)) {
		t.Errorf("a policy file without metadata: %v, want solve.ErrBadPolicy naming the file", err)
	}
}
