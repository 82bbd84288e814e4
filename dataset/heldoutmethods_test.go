package dataset_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/solve"
)

// HeldOutMethods scores methods as HeldOut does; methods cross-fitted
// apart (under settings that differ only in the workers) get the same
// records, bit for bit, as when cross-fitted together, so their
// differences are paired; sitewise's difference from itself, cross-fitted apart, is 0 with
// the interval [0, 0].
func TestHeldOutMethods(t *testing.T) {
	d := trapData(t)
	ctx := context.Background()
	probs := []solve.Problem{{Method: solve.Sitewise}, {Method: solve.Pooled}, {Method: solve.Behaviour}}
	s := solve.DefaultSettings
	o := dataset.SelectOptions{Settings: s, Folds: 3, Seed: 2, Bootstrap: 10}
	together := make([]dataset.MethodSpec, len(probs))
	apart := make([]dataset.MethodSpec, len(probs))
	for i, p := range probs {
		together[i] = dataset.MethodSpec{Method: p.Method, Problem: p, Settings: s}
		apart[i] = together[i]
		apart[i].Settings.Workers = i + 1
	}
	hc, recs, err := d.HeldOutMethods(ctx, o, together)
	if err != nil {
		t.Fatal(err)
	}
	_, recsApart, err := d.HeldOutMethods(ctx, o, apart)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := d.HeldOut(ctx, o, probs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range probs {
		a, _ := json.Marshal(recs[i])
		b, _ := json.Marshal(recsApart[i])
		if string(a) != string(b) {
			t.Errorf("%s: together %s, apart %s", probs[i].Method, a, b)
		}
		if *recs[i].Score != *ref[i].Score || recs[i].WorstSite != ref[i].WorstSite {
			t.Errorf("%s: score %v at %s, HeldOut gives %v at %s", probs[i].Method, *recs[i].Score, recs[i].WorstSite, *ref[i].Score, ref[i].WorstSite)
		}
	}
	if recs[0].VsSitewise != nil || recs[1].VsSitewise == nil {
		t.Fatalf("vs_sitewise: sitewise %v, pooled %v", recs[0].VsSitewise, recs[1].VsSitewise)
	}
	if hc.Folds != 3 || hc.Bootstrap != 10 || hc.Best == "" {
		t.Errorf("record %+v", hc)
	}
	// Sitewise against itself: every difference 0, intervals [0, 0].
	self := []dataset.MethodSpec{together[0], together[0]}
	self[1].Settings.Workers = 2
	_, recsSelf, err := d.HeldOutMethods(ctx, o, self)
	if err != nil {
		t.Fatal(err)
	}
	v := recsSelf[1].VsSitewise
	if v == nil || *v.Value != 0 || *v.CILow != 0 || *v.CIHigh != 0 {
		t.Fatalf("sitewise minus itself: %+v, want 0 in [0, 0]", v)
	}
	for _, s := range v.Sites {
		if *s.Value != 0 || *s.CILow != 0 || *s.CIHigh != 0 {
			t.Errorf("site %s: sitewise minus itself %v [%v, %v]", s.Site, *s.Value, *s.CILow, *s.CIHigh)
		}
	}
}
