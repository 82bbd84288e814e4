package federate

import (
	"errors"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/features"
)

func shapeJob() *Job {
	return &Job{FormatVersion: FormatVersion, ID: "j1", Method: "sitewise", Map: features.Map{Kind: features.Tabular},
		Lambda: 1, Sites: []string{"a", "b"}, MinSites: 1, Ask: []string{AskH, AskA, AskS},
		Rules: Rules{FirstStep: "0", Nulls: "truncate"}}
}

// The shape round: each site's message survives encoding, foldShape sets
// each asked size to the largest over the sites, and refuses a round with
// a site missing or twice, a solve round's message, or a site without
// sizes, leaving the job as it was.
func TestFoldShape(t *testing.T) {
	j := shapeJob()
	if err := j.Check(); err != nil {
		t.Fatal(err)
	}
	s := NewState(j)
	msg := func(site string, sz Sizes) Incoming {
		m, err := ShapeMessage(j, s, ShapeInput{Site: site, DataSites: []string{site}, Sizes: sz})
		if err != nil {
			t.Fatal(err)
		}
		meta, vecs, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		d, err := Decode(site, meta, vecs)
		if err != nil {
			t.Fatal(err)
		}
		return Incoming{File: site + ".parquet", Msg: d}
	}
	a, b := msg("a", Sizes{H: 4, A: 3, S: 9}), msg("b", Sizes{H: 6, A: 2, S: 7})
	nj, err := foldShape(j, s, []Incoming{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if nj.H != 6 || nj.Map.A != 3 || nj.Map.S != 9 || nj.ShapeOpen() || nj.ID != j.ID {
		t.Fatalf("folded job H = %d, A = %d, S = %d, ask %v", nj.H, nj.Map.A, nj.Map.S, nj.Ask)
	}
	if !j.ShapeOpen() || j.H != 0 {
		t.Fatalf("foldShape changed its job")
	}
	solveMsg := *b.Msg
	solveMsg.Kind = ""
	for _, tc := range []struct {
		in   []Incoming
		want string
	}{
		{[]Incoming{a}, "no message from site [b]"},
		{[]Incoming{a, a, b}, "sent twice"},
		{[]Incoming{a, {File: "x", Msg: &solveMsg}}, "a solve round"},
		{[]Incoming{a, msg("b", Sizes{})}, "sent no size"},
	} {
		_, err := foldShape(j, s, tc.in)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want a refusal with %q, got %v", tc.want, err)
		}
	}
	// Text actions need the job's labels; a site of other sites is refused.
	if _, err := ShapeMessage(j, s, ShapeInput{Site: "a", DataSites: []string{"a"}, Labelled: true}); !errors.Is(err, ErrLabelsNeeded) {
		t.Errorf("text actions without labels: %v", err)
	}
	if _, err := ShapeMessage(j, s, ShapeInput{Site: "a", DataSites: []string{"a", "b"}}); !errors.Is(err, ErrRefused) {
		t.Errorf("two sites' rows: %v", err)
	}
}

// A job's rules, asks and sites are checked: unknown sizes to ask, a bad null
// policy, labels that are not sorted or do not number A, an empty or
// repeated site (a SettingError, as New refuses it).
func TestJobRulesChecked(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Job)
		want string
	}{
		{func(j *Job) { j.Ask = []string{"X"} }, `"X"`},
		{func(j *Job) { j.Rules.Nulls = "zero" }, "null policy"},
		{func(j *Job) { j.Rules.FirstStep = "2" }, "first step"},
		{func(j *Job) { j.Rules.ActionLabels = []string{"b", "a"} }, "sorted"},
		{func(j *Job) { j.Ask = []string{AskH, AskS}; j.Map.A = 3; j.Rules.ActionLabels = []string{"a", "b"} }, "2 action labels for A = 3"},
		{func(j *Job) { j.Sites = append(j.Sites, "") }, "Sites has an empty site name"},
		{func(j *Job) { j.Sites = append(j.Sites, j.Sites[0]) }, "Sites lists site a twice"},
	} {
		j := shapeJob()
		tc.edit(j)
		if err := j.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error with %q, got %v", tc.want, err)
		}
	}
}
