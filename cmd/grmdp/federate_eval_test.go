package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/grmdp/grmdp/federate"
)

// checkValueMessage fails unless a value round's message obeys disclosure
// control: every count it holds (coverage, no evidence) is 0 or at least
// minCount, and its value sums come from at least max(minRows, minCount)
// rows.
func checkValueMessage(t *testing.T, file string, m *federate.Message, minCount, minRows int) {
	t.Helper()
	for _, v := range m.Extra {
		switch v.Name {
		case "coverage", "no_evidence":
			for i, c := range v.Values {
				if c != 0 && c < float64(minCount) {
					t.Fatalf("%s: %s %d is %v < %d", file, v.Name, i, c, minCount)
				}
			}
		case "value":
			if v.Values[1] < float64(max(minRows, minCount)) {
				t.Fatalf("%s: a value sum over %v rows", file, v.Values[1])
			}
		default:
			t.Fatalf("%s: unexpected vector %s in a value message", file, v.Name)
		}
	}
}

// sameSolveJSON compares a central solve --json with a federated job's
// solve.json: the value estimate to 1e-12 relative (the coordinator adds
// the sites' sums of Vhat_1, the central solve every row in one serial
// sum), and exactly the diagnostics made of counts and of the Grams
// (decisions without evidence, uncovered features, condition numbers,
// empty cells). The penalty's share is null in the federated one.
func sameSolveJSON(t *testing.T, what, centralOut, fedFile string) {
	t.Helper()
	var want, got solveDoc
	if err := json.Unmarshal([]byte(centralOut), &want); err != nil {
		t.Fatalf("%s: central: %v", what, err)
	}
	b, err := os.ReadFile(fedFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%s: %s: %v", what, fedFile, err)
	}
	switch {
	case (want.ValueEstimate == nil) != (got.ValueEstimate == nil):
		t.Fatalf("%s: value %v, central %v", what, got.ValueEstimate, want.ValueEstimate)
	case want.ValueEstimate != nil && math.Abs(*want.ValueEstimate-*got.ValueEstimate) > 1e-12*math.Abs(*want.ValueEstimate):
		t.Fatalf("%s: value %v, central %v", what, *got.ValueEstimate, *want.ValueEstimate)
	case want.Beta != got.Beta || want.Method != got.Method || want.D != got.D:
		t.Fatalf("%s: beta %v method %s d %d, central %v %s %d", what, got.Beta, got.Method, got.D, want.Beta, want.Method, want.D)
	}
	wd, gd := want.Diagnostics, got.Diagnostics
	if wd.NoEvidenceShare != gd.NoEvidenceShare || fmt.Sprint(wd.NoEvidenceBySite) != fmt.Sprint(gd.NoEvidenceBySite) {
		t.Fatalf("%s: no evidence %v %v, central %v %v", what, gd.NoEvidenceShare, gd.NoEvidenceBySite, wd.NoEvidenceShare, wd.NoEvidenceBySite)
	}
	if fmt.Sprint(wd.Uncovered) != fmt.Sprint(gd.Uncovered) || fmt.Sprint(wd.Condition) != fmt.Sprint(gd.Condition) || fmt.Sprint(wd.EmptyCells) != fmt.Sprint(gd.EmptyCells) {
		t.Fatalf("%s: uncovered %v condition %v empty %v; central %v %v %v", what, gd.Uncovered, gd.Condition, gd.EmptyCells, wd.Uncovered, wd.Condition, wd.EmptyCells)
	}
	if gd.PenaltyShare != nil {
		t.Fatalf("%s: a federated penalty share %v", what, gd.PenaltyShare)
	}
}
