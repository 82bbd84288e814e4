package solve

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
)

// policySeed is a valid policy's artifact: its rows and metadata JSON.
type policySeed struct {
	rows []ArtifactRow
	meta string
}

// policySeeds returns valid policies, one per feature map and method kind
// (featurewise penalty, PEVI with one run and with several, behaviour),
// whose artifacts FuzzPolicy mutates.
func policySeeds(t testing.TB) []policySeed {
	ctx := context.Background()
	var seeds []policySeed
	for i, m := range testMaps() {
		tb := randomTable(t, m, 3, 3, []int{8, 6, 9}, uint64(20+i))
		st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 1)
		if err != nil {
			t.Fatal(err)
		}
		sv := NewSolver(st, DefaultSettings)
		for _, method := range []Method{Sitewise, PEVIPooled, PEVIAvg, Behaviour} {
			p, err := sv.Solve(ctx, Problem{Method: method})
			if err != nil {
				t.Fatal(err)
			}
			rows, meta, err := p.ArtifactRows()
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, policySeed{rows, meta[metaKey]})
		}
	}
	return seeds
}

// applyEdits mutates rows by a little program: each edit is 12 bytes, an
// operation, a row, a field, a position and a 64-bit value.
func applyEdits(rows []ArtifactRow, edits []byte) []ArtifactRow {
	rows = slices.Clone(rows)
	for i := range rows {
		rows[i].W, rows[i].M, rows[i].Linv = slices.Clone(rows[i].W), slices.Clone(rows[i].M), slices.Clone(rows[i].Linv)
		rows[i].Fallback = slices.Clone(rows[i].Fallback)
	}
	for len(edits) >= 12 && len(rows) > 0 {
		op, r, field, pos := edits[0]%8, int(edits[1])%len(rows), edits[2]%4, int(edits[3])
		val := binary.LittleEndian.Uint64(edits[4:12])
		edits = edits[12:]
		row := &rows[r]
		vec := []*[]float64{&row.W, &row.M, &row.Linv, nil}[field]
		switch op {
		case 0: // set a float (any bit pattern: NaN, Inf, denormals)
			if vec != nil && len(*vec) > 0 {
				(*vec)[pos%len(*vec)] = math.Float64frombits(val)
			}
		case 1: // set a float to a small value
			if vec != nil && len(*vec) > 0 {
				(*vec)[pos%len(*vec)] = float64(int64(val%2001)-1000) / 100
			}
		case 2: // truncate a vector
			if vec != nil && len(*vec) > 0 {
				*vec = (*vec)[:pos%len(*vec)]
			} else if len(row.Fallback) > 0 {
				row.Fallback = row.Fallback[:pos%len(row.Fallback)]
			}
		case 3: // set the step
			row.Step = int32(val)
		case 4: // set the group
			row.Group = int32(int64(val%8) - 2)
		case 5: // set a behaviour action
			if len(row.Fallback) > 0 {
				row.Fallback[pos%len(row.Fallback)] = int32(val)
			}
		case 6: // drop the row
			rows = slices.Delete(rows, r, r+1)
		case 7: // duplicate the row
			rows = slices.Insert(rows, r, rows[r])
		}
	}
	return rows
}

// validStates returns a few states the policy's feature map accepts.
func validStates(m *features.Map, rng *rand.Rand) [][]float64 {
	var out [][]float64
	for range 6 {
		switch m.Kind {
		case features.Tabular:
			out = append(out, []float64{float64(rng.IntN(m.S))})
		case features.Indicator:
			out = append(out, []float64{float64(rng.IntN(3))})
		case features.ActionBlock:
			s := make([]float64, m.P)
			for j := range s {
				if rng.IntN(3) > 0 {
					s[j] = rng.Float64() * 10
				}
			}
			s[rng.IntN(m.P)] = 1
			out = append(out, s)
		case features.Precomputed:
			s := make([]float64, m.A*m.D)
			for a := range m.A {
				s[a*m.D+rng.IntN(m.D)] = 1
			}
			out = append(out, s)
		}
	}
	return out
}

// FuzzPolicy mutates a valid policy's metadata JSON and its rows and
// checks that FromRows never panics, that every error wraps ErrBadPolicy,
// and that an accepted policy gives finite Qhat in [0, H-h+1] and an
// action in 0..A-1 for valid states at every step.
func FuzzPolicy(f *testing.F) {
	seeds := policySeeds(f)
	for i, s := range seeds {
		f.Add(uint8(i), s.meta, []byte{})
	}
	nan := binary.LittleEndian.AppendUint64([]byte{0, 0, 0, 0}, math.Float64bits(math.NaN()))
	f.Add(uint8(0), seeds[0].meta, nan)
	f.Add(uint8(5), seeds[5].meta, append([]byte{0, 0, 2, 0}, nan[4:]...))
	f.Add(uint8(1), seeds[1].meta, []byte{3, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(0), `{"format":1,"method":"sitewise","H":1,"d":1,"actions":1}`, []byte{})
	f.Fuzz(func(t *testing.T, which uint8, meta string, edits []byte) {
		s := seeds[int(which)%len(seeds)]
		rows := applyEdits(s.rows, edits)
		p, err := FromRows("fuzz.parquet", rows, map[string]string{metaKey: meta})
		if err != nil {
			if !errors.Is(err, ErrBadPolicy) {
				t.Fatalf("error %q does not wrap ErrBadPolicy", err)
			}
			return
		}
		// Keep the check cheap for maps the fuzzer made huge.
		if p.Map.Width() > 1<<12 || p.H > 64 {
			return
		}
		rng := rand.New(rand.NewPCG(uint64(which), uint64(len(edits))))
		q := make([]float64, p.A)
		for h := 1; h <= p.H; h++ {
			for _, state := range validStates(&p.Map, rng) {
				p.QValues(h, state, q)
				top := float64(p.H - h + 1)
				for a, v := range q {
					if math.IsNaN(v) || v < 0 || v > top {
						t.Fatalf("step %d, state %v, action %d: Qhat = %v, want a number in [0, %v]", h, state, a, v, top)
					}
				}
				a, v, _ := p.Act(h, state, q)
				if a < 0 || a >= p.A || math.IsNaN(v) {
					t.Fatalf("step %d, state %v: Act gives action %d (A = %d), value %v", h, state, a, p.A, v)
				}
			}
		}
	})
}
