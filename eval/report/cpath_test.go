package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With a policy's selection record the c-path plot has a held-out panel:
// the candidates' scores, the fallback's line and the chosen candidate
// ringed with the vertical line at its c; when the fallback was chosen,
// its line says so and no c is marked. A record that does not parse is an
// error.
func TestCPathPlotSelection(t *testing.T) {
	dir := t.TempDir()
	pts := []CPathPoint{
		{C: 5e-6, ValueEstimate: 3.1, RobustValue: 3.2, PessimisticValue: 3.1, Agreement: 0.05},
		{C: 5e-5, ValueEstimate: 2.9, RobustValue: 3.1, PessimisticValue: 2.9, Agreement: 0.2},
		{C: 5e-4, ValueEstimate: 1.4, RobustValue: 3.0, PessimisticValue: 1.4, NoEvidence: 0.3, Agreement: 0.5},
	}
	sel := func(chosen string) json.RawMessage {
		site := func(v, lo, hi float64) string {
			b, _ := json.Marshal(map[string]any{"site": "a", "value": v, "ci_low": lo, "ci_high": hi})
			return string(b)
		}
		cands := []string{`{"c": null, "lambda": null, "score": 2.0, "worst_site": "a", "sites": [` + site(2.2, 2.0, 2.4) + `]}`}
		for i, c := range []string{"5e-6", "5e-5", "5e-4", "0"} {
			v := 2.5 - 0.1*float64(i)
			cands = append(cands, fmt.Sprintf(`{"c": %s, "lambda": 1, "score": %g, "worst_site": "a", "sites": [%s]}`, c, v-0.2, site(v, v-0.3, v+0.3)))
		}
		return json.RawMessage(`{"folds": 3, "seed": 1, "level": 0.9, "chosen": ` + chosen + `, "candidates": [` + strings.Join(cands, ",") + `]}`)
	}
	for name, tc := range map[string]struct {
		chosen string
		want   []string
		not    []string
	}{
		"learned":  {`{"c": 5e-5, "lambda": 1}`, []string{"chosen candidate", "behaviour fallback: score", "chosen c = 5e-05", "held out"}, []string{"(chosen)"}},
		"fallback": {`{"c": null, "lambda": null}`, []string{"behaviour fallback: score (chosen)"}, []string{"chosen c ="}},
	} {
		base := filepath.Join(dir, name)
		if err := CPathPlot(base, pts, 5e-4, 7, sel(tc.chosen)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		svg, _ := os.ReadFile(base + ".svg")
		for _, w := range tc.want {
			if !bytes.Contains(svg, []byte(w)) {
				t.Errorf("%s: the SVG lacks %q", name, w)
			}
		}
		for _, w := range tc.not {
			if bytes.Contains(svg, []byte(w)) {
				t.Errorf("%s: the SVG has %q", name, w)
			}
		}
	}
	if err := CPathPlot(filepath.Join(dir, "bad"), pts, 5e-4, 7, json.RawMessage(`{"candidates": 3}`)); err == nil {
		t.Error("a selection record that does not parse is accepted")
	}
}
