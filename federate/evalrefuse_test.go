package federate

import (
	"context"
	"errors"
	"testing"

	"github.com/grmdp/grmdp/solve"
)

// TestEvalMessageRefusesOtherMap: an evaluation round checks a site's
// input as a solve round does; data read under another map (here tabular
// with S = 5 against the job's S = 4) are refused, not evaluated.
func TestEvalMessageRefusesOtherMap(t *testing.T) {
	ctx := context.Background()
	const H = 3
	m := maps()[0]
	names, chunks := siteChunks(m, 3, H, []int{40, 30, 50}, false, 7)
	sites := siteInputs(t, m, H, names, chunks, solve.Disclosure{})
	j := testJob(solve.Sitewise, m, H, names, solve.Disclosure{})
	s := playJob(t, j, sites)
	p, err := Policy(j, s)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEval(j, s, p, "p.parquet", "sha", nil)
	if err != nil {
		t.Fatal(err)
	}
	other := m
	other.S = 5
	st, err := solve.NewStats(ctx, buildTable(t, other, H, chunks[0]), other, other.Blocks(), 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = EvalMessage(ctx, j, s, e, p, SiteInput{Stats: st, Site: names[0]})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("data under another map: got %v, want a refusal", err)
	}
	if _, err := EvalMessage(ctx, j, s, e, p, sites[0]); err != nil {
		t.Fatalf("the site's own data: %v", err)
	}
}
