package main

// The guardrails of issue 8 end to end, on the formulary scenario (5
// hospitals of very different sizes, a restricted formulary, early deaths,
// d = 1920, H = 20) with default settings.

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

func TestGuardrailsFormulary(t *testing.T) {
	dir := t.TempDir()
	data, model := simulated(t, dir, "formulary")
	pol := filepath.Join(dir, "policy.parquet")

	t.Run("solve warns about evidence and the penalty", func(t *testing.T) {
		code, out, errOut := grmdp(t, "solve", "--features", "tabular", "--json", "-o", pol, data)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var doc struct {
			Fallback    string `json:"fallback"`
			Diagnostics struct {
				NoEvidenceShare  float64            `json:"no_evidence_share"`
				NoEvidenceBySite map[string]float64 `json:"no_evidence_by_site"`
				PenaltyShare     []float64          `json:"penalty_share"`
				Uncovered        []solve.Uncovered  `json:"uncovered"`
			} `json:"diagnostics"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("solve --json: %v\n%s", err, out)
		}
		dg := doc.Diagnostics
		if !(dg.NoEvidenceShare > solve.NoEvidenceWarn) {
			t.Errorf("no_evidence_share = %v, want > %v", dg.NoEvidenceShare, solve.NoEvidenceWarn)
		}
		if len(dg.NoEvidenceBySite) != 5 || len(dg.PenaltyShare) != 20 || len(dg.Uncovered) == 0 {
			t.Errorf("diagnostics incomplete: %d sites, %d penalty shares, %d uncovered", len(dg.NoEvidenceBySite), len(dg.PenaltyShare), len(dg.Uncovered))
		}
		if doc.Fallback != string(solve.FallbackBehaviour) {
			t.Errorf("fallback %q, want behaviour by default", doc.Fallback)
		}
		for _, frag := range []string{"have no evidence", "the penalty (beta =", "erases every estimate"} {
			if !strings.Contains(errOut, frag) {
				t.Errorf("stderr lacks %q:\n%s", frag, errOut)
			}
		}
		if len(doc.Warnings) == 0 || strings.Count(errOut, "grmdp: warning:") != len(doc.Warnings) {
			t.Errorf("%d warnings in the JSON, stderr:\n%s", len(doc.Warnings), errOut)
		}
	})

	t.Run("default policy is no worse than behaviour cloning", func(t *testing.T) {
		cmp := filepath.Join(dir, "compare")
		mustRun(t, "compare", "--features", "tabular", "--model", model, "-o", cmp, data)
		b, err := os.ReadFile(filepath.Join(cmp, "compare.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Methods []struct {
				Method      string   `json:"method"`
				PolicyValue *float64 `json:"policy_value"`
			} `json:"methods"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		values := map[string]float64{}
		for _, m := range doc.Methods {
			if m.PolicyValue == nil {
				t.Fatalf("%s has no exact policy_value", m.Method)
			}
			values[m.Method] = *m.PolicyValue
		}
		sw, okS := values["sitewise"]
		bh, okB := values["behaviour"]
		if !okS || !okB {
			t.Fatalf("compare.json lacks sitewise or behaviour: %v", values)
		}
		t.Logf("exact worst-site values: sitewise %.4f, behaviour %.4f", sw, bh)
		if sw < bh-1e-9 {
			t.Errorf("sitewise (default settings, behaviour fallback) worst-site value %v < behaviour cloning's %v", sw, bh)
		}
		p, err := readPolicy(filepath.Join(cmp, "sitewise.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if p.Fallback != solve.FallbackBehaviour {
			t.Errorf("compare's sitewise policy records fallback %q", p.Fallback)
		}
	})

	t.Run("penalty path", func(t *testing.T) {
		path := filepath.Join(dir, "path.parquet")
		out := mustRun(t, "solve", "--features", "tabular", "--c-path", "1e-6:1e-3:4", "-o", path, data)
		if !strings.Contains(out, "penalty path") || !strings.Contains(out, "no evidence") {
			t.Errorf("no penalty path table on stdout:\n%s", out)
		}
		// The plot marks the c the policy was solved at (the default).
		svg, err := os.ReadFile(filepath.Join(dir, "path.cpath.svg"))
		if err != nil || !strings.Contains(string(svg), "chosen c = 0.0005") {
			t.Errorf("path.cpath.svg missing or without the chosen c (err %v)", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "path.cpath.png")); err != nil {
			t.Error(err)
		}
		f, err := os.Open(filepath.Join(dir, "path.cpath.csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 5 || recs[0][0] != "c" || recs[0][2] != "no_evidence_share" {
			t.Fatalf("cpath.csv: %q", recs)
		}
		var cs, shares []float64
		for _, r := range recs[1:] {
			c, err1 := strconv.ParseFloat(r[0], 64)
			s, err2 := strconv.ParseFloat(r[2], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("cpath.csv row %q", r)
			}
			cs, shares = append(cs, c), append(shares, s)
		}
		t.Logf("c %v: no-evidence share %v", cs, shares)
		for i := 1; i < len(cs); i++ {
			if !(cs[i] > cs[i-1]) || shares[i] < shares[i-1] {
				t.Errorf("no-evidence share not non-decreasing in c: c %v, share %v", cs, shares)
			}
		}
		if cs[len(cs)-1] != 1e-3 || shares[len(shares)-1] != 1 {
			t.Errorf("at c = %v the no-evidence share is %v, want 1 at c = 1e-3", cs[len(cs)-1], shares[len(shares)-1])
		}
		if !(shares[0] < 1) {
			t.Errorf("at c = 1e-6 the share is already %v: the path does not show where the penalty starts to erase", shares[0])
		}
	})

	t.Run("apply adds an evidence column", func(t *testing.T) {
		applied := filepath.Join(dir, "applied.parquet")
		mustRun(t, "apply", "--policy", pol, "-o", applied, data)
		fp, err := parquetio.Measure([]string{applied}, parquetio.ColEvidence)
		if err != nil {
			t.Fatal(err)
		}
		inRows, err := parquetio.CountRows([]string{data})
		if err != nil {
			t.Fatal(err)
		}
		if fp.Rows != inRows || fp.Values != inRows {
			t.Errorf("applied: %d rows, %d evidence values, want %d of each", fp.Rows, fp.Values, inRows)
		}
		// Every recommendation is the policy's Act: here, without evidence,
		// the behaviour fallback.
		p, err := readPolicy(pol)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := parquetio.Read(context.Background(), []string{applied}, traj.Options{
			Columns: traj.Columns{Action: parquetio.ColRecommendedAction},
			State:   traj.StateSpec{Columns: []string{"state"}, Integer: true, Max: p.Map.S},
			Actions: p.A,
		})
		if err != nil {
			t.Fatal(err)
		}
		q := make([]float64, p.A)
		noev := 0
		for h := 1; h <= tb.H; h++ {
			step := &tb.Steps[h-1]
			for j := 0; j < step.Len(); j++ {
				state := step.State[j : j+1]
				a, _, ev := p.Act(h, state, q)
				if int(step.Action[j]) != a {
					t.Fatalf("step %d row %d: recommended %d, the policy's Act %d", h, j, step.Action[j], a)
				}
				if !ev {
					noev++
					if want := p.BehaviourAction[h-1][int(state[0])]; int32(a) != want {
						t.Fatalf("step %d state %v: no evidence, recommended %d, behaviour %d", h, state[0], a, want)
					}
				}
			}
		}
		if noev == 0 {
			t.Error("no decision without evidence: the fallback was not exercised")
		}
	})
}

var guardrailsDocAll = flag.Bool("guardrails-doc-all", false, "TestGuardrailsDoc: also run the slow (compare) blocks of docs/GUARDRAILS.md")

// docBlock is a console block of a Markdown page: commands and the stdout
// each must print.
type docBlock struct {
	slow bool
	cmds []string
	outs []string
}

func consoleBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	var cur *docBlock
	var out []string
	flush := func() {
		if cur != nil && len(cur.cmds) > len(cur.outs) {
			cur.outs = append(cur.outs, normalizeOutput(strings.Join(out, "\n")))
		}
		out = nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```console"):
			cur = &docBlock{slow: strings.Contains(line, "slow")}
		case cur != nil && line == "```":
			flush()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil && strings.HasPrefix(line, "$ "):
			flush()
			cur.cmds = append(cur.cmds, strings.TrimPrefix(line, "$ "))
		case cur != nil:
			out = append(out, line)
		}
	}
	return blocks
}

// normalizeOutput drops trailing spaces on each line and trailing blank
// lines.
func normalizeOutput(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// docs/GUARDRAILS.md quotes commands and their output on the formulary
// scenario: every number in it must be what grmdp prints. The compare
// blocks (marked slow) run with -guardrails-doc-all.
func TestGuardrailsDoc(t *testing.T) {
	doc, err := filepath.Abs(filepath.Join("..", "..", "docs", "GUARDRAILS.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := consoleBlocks(t, doc)
	if len(blocks) < 3 {
		t.Fatalf("%s: %d console blocks", doc, len(blocks))
	}
	t.Chdir(t.TempDir())
	ran := 0
	for _, b := range blocks {
		if b.slow && !*guardrailsDocAll {
			continue
		}
		for i, cmd := range b.cmds {
			args := strings.Fields(cmd)
			if len(args) == 0 || args[0] != "grmdp" {
				t.Fatalf("%s: command %q does not start with grmdp", doc, cmd)
			}
			code, out, errOut := grmdp(t, args[1:]...)
			if code != 0 {
				t.Fatalf("%s: exit %d\n%s", cmd, code, errOut)
			}
			if got := normalizeOutput(out); got != b.outs[i] {
				t.Errorf("docs/GUARDRAILS.md is out of date: $ %s\nprints:\n%s\n\nthe page says:\n%s", cmd, got, b.outs[i])
			}
			ran++
		}
	}
	t.Logf("%d commands checked", ran)
}
