package federate

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// TestFoldRefuses pins each refusal of Fold and Decode on messages made by
// SiteMessage and then altered (and resealed, so that only the altered
// field is wrong), and checks that Fold never changes the state it is
// given, refused or not.
func TestFoldRefuses(t *testing.T) {
	ctx := context.Background()
	m := maps()[0]
	names, chunks := siteChunks(m, 3, 3, []int{40, 30, 50}, false, 4)
	dc := solve.Disclosure{MinCount: 5, MinRows: 10}
	j := &Job{FormatVersion: FormatVersion, ID: "job-a", Method: solve.Pooled, Map: m, H: 3, Lambda: 1, C: 5e-4, Xi: 0.05,
		Sites: names, Disclosure: dc, MinSites: 3}
	s := NewState(j)
	var good []Incoming
	for k, c := range chunks {
		st, err := solve.NewStatsDisclosed(ctx, buildTable(t, m, 3, c), m, m.Blocks(), 1, dc)
		if err != nil {
			t.Fatal(err)
		}
		src := []traj.Source{{Path: "data.parquet", Size: 1000, Fingerprint: "f00d", Rows: int64(st.Table.Rows)}}
		msg, err := SiteMessage(ctx, j, s, SiteInput{Stats: st, Site: names[k], Sources: src})
		if err != nil {
			t.Fatal(err)
		}
		good = append(good, Incoming{File: names[k], Msg: msg})
	}
	before, _ := json.Marshal(s)
	alter := func(f func(m *Message)) []Incoming {
		out := make([]Incoming, len(good))
		copy(out, good)
		c := *good[0].Msg
		f(&c)
		c.seal()
		out[0].Msg = &c
		return out
	}
	for _, tc := range []struct {
		name string
		in   []Incoming
	}{
		{"another job", alter(func(m *Message) { m.JobID = "job-b" })},
		{"another round", alter(func(m *Message) { m.Round, m.Step = 1, 2 })},
		{"unknown site", alter(func(m *Message) { m.Site = "elsewhere" })},
		{"site twice", append(good[:1:1], good[0], good[1], good[2])},
		{"site missing", good[:2]},
		{"looser thresholds", alter(func(m *Message) { m.Disclosure.MinCount = 2 })},
		{"another map", alter(func(m *Message) { m.Map.S++ })},
		{"short Gram", alter(func(m *Message) { m.Gram = m.Gram[:3] })},
	} {
		_, err := Fold(ctx, j, s, tc.in)
		if !errors.Is(err, ErrRefused) {
			t.Errorf("%s: error %v, want a refusal", tc.name, err)
		}
		if after, _ := json.Marshal(s); string(after) != string(before) {
			t.Fatalf("%s: the state changed", tc.name)
		}
	}
	// A changed value without a new checksum is corrupted.
	meta, vecs, err := good[1].Msg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	vecs[0].Values = append([]float64(nil), vecs[0].Values...)
	vecs[0].Values[0] += 1
	if _, err := Decode("x", meta, vecs); !errors.Is(err, ErrRefused) {
		t.Errorf("tampered Gram: %v, want a refusal", err)
	}
	// What the job's disclosure control cannot have released: each
	// refused naming the file and the check.
	first := slices.IndexFunc(good[0].Msg.Counts, func(x float64) bool { return x > 0 })
	for _, tc := range []struct {
		name, check string
		f           func(m *Message)
	}{
		{"negative count", "check counts", func(m *Message) { m.Counts = slices.Clone(m.Counts); m.Counts[first] = -m.Counts[first] }},
		{"fractional count", "check counts", func(m *Message) { m.Counts = slices.Clone(m.Counts); m.Counts[first] += 0.5 }},
		{"count below K", "check counts", func(m *Message) { m.Counts = slices.Clone(m.Counts); m.Counts[first] = 3 }},
		{"action count below K", "check counts", func(m *Message) { m.Behaviour = slices.Clone(m.Behaviour); m.Behaviour[0] = 2 }},
		{"counts times ten", "check gram", func(m *Message) {
			m.Counts = slices.Clone(m.Counts)
			for i := range m.Counts {
				m.Counts[i] *= 10
			}
		}},
		{"Gram off its count", "check gram", func(m *Message) { m.Gram = slices.Clone(m.Gram); m.Gram[first]++ }},
		{"silent with sums", "check silent", func(m *Message) { m.Silent = true }},
	} {
		_, err := Fold(ctx, j, s, alter(tc.f))
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.check) || !strings.Contains(err.Error(), good[0].File) {
			t.Errorf("%s: error %v, want a refusal naming %s and %q", tc.name, err, good[0].File, tc.check)
		}
		if after, _ := json.Marshal(s); string(after) != string(before) {
			t.Fatalf("%s: the state changed", tc.name)
		}
	}
	next, err := Fold(ctx, j, s, good)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(s); string(after) != string(before) || next.Round != 1 {
		t.Fatal("a successful fold changed its input state, or did not advance")
	}
	// Round 1: a site whose data files changed (same totals) is refused.
	var round1 []Incoming
	for k, c := range chunks {
		st, err := solve.NewStatsDisclosed(ctx, buildTable(t, m, 3, c), m, m.Blocks(), 1, dc)
		if err != nil {
			t.Fatal(err)
		}
		fp := "f00d"
		if k == 1 {
			fp = "beef"
		}
		src := []traj.Source{{Path: "data.parquet", Size: 1000, Fingerprint: fp, Rows: int64(st.Table.Rows)}}
		msg, err := SiteMessage(ctx, j, next, SiteInput{Stats: st, Site: names[k], Sources: src})
		if err != nil {
			t.Fatal(err)
		}
		round1 = append(round1, Incoming{File: names[k] + "-r1", Msg: msg})
	}
	if _, err := Fold(ctx, j, next, round1); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "check data") || !strings.Contains(err.Error(), round1[1].File) {
		t.Errorf("changed data: error %v, want a refusal naming %s and the data check", err, round1[1].File)
	}
}
