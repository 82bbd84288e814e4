//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// exportHospitals are the hospitals of the steward's export, and the
// number of patients each holds.
var exportHospitals = []struct {
	name     string
	patients int
}{{"boston", 240}, {"cork", 150}, {"lyon", 310}, {"oslo", 120}, {"porto", 200}}

// writeExport writes a hospital export as a data steward would receive
// it: one folder per hospital (dir/NAME/part-0.parquet and part-1), with
// the columns hospital, patient_id, t (from 0), treatment (text:
// fluids, none, vasopressors), outcome and lactate, some lactate NULL.
func writeExport(t *testing.T, dir string) {
	t.Helper()
	treatments := []string{"none", "fluids", "vasopressors"}
	for k, h := range exportHospitals {
		rng := rand.New(rand.NewPCG(uint64(k)+1, 26))
		var parts [2][]exportRow
		for p := range h.patients {
			n := 2 + rng.IntN(5) // t = 0..n-1, at most 6 steps
			lactate := 1 + 4*rng.Float64()
			for s := range n {
				a := rng.IntN(3)
				if lactate > 3.5 && rng.Float64() < 0.6 {
					a = 2
				}
				r := exportRow{hospital: h.name, patient: fmt.Sprintf("%s-%04d", h.name[:3], p), t: s, treatment: treatments[a], lactate: &lactate}
				r.outcome = min(max(0.9-lactate/6+0.15*float64(a)*(lactate-2.5)/2.5+0.1*rng.Float64(), 0), 1)
				if (p*7+s*3+k)%37 == 0 {
					r.lactate = nil
				}
				parts[p%2] = append(parts[p%2], r)
				v := lactate - 0.6*float64(a) + 0.8*rng.Float64() - 0.2
				lactate = min(max(v, 0.5), 6)
			}
		}
		for i, rows := range parts {
			writeExportRows(t, filepath.Join(dir, h.name, fmt.Sprintf("part-%d.parquet", i)), rows)
		}
	}
}

// exportRow is one row of the export; a nil lactate is a NULL.
type exportRow struct {
	hospital, patient string
	t                 int
	treatment         string
	outcome           float64
	lactate           *float64
}

func writeExportRows(t *testing.T, path string, rows []exportRow) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "hospital", Type: arrow.BinaryTypes.String},
		{Name: "patient_id", Type: arrow.BinaryTypes.String},
		{Name: "t", Type: arrow.PrimitiveTypes.Int32},
		{Name: "treatment", Type: arrow.BinaryTypes.String},
		{Name: "outcome", Type: arrow.PrimitiveTypes.Float64},
		{Name: "lactate", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	rb := array.NewRecordBuilder(memory.NewGoAllocator(), sc)
	defer rb.Release()
	for _, r := range rows {
		rb.Field(0).(*array.StringBuilder).Append(r.hospital)
		rb.Field(1).(*array.StringBuilder).Append(r.patient)
		rb.Field(2).(*array.Int32Builder).Append(int32(r.t))
		rb.Field(3).(*array.StringBuilder).Append(r.treatment)
		rb.Field(4).(*array.Float64Builder).Append(r.outcome)
		if r.lactate == nil {
			rb.Field(5).AppendNull()
		} else {
			rb.Field(5).(*array.Float64Builder).Append(*r.lactate)
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fw, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

// yamlBlock returns the first ```yaml block of a Markdown file's section.
func yamlBlock(t *testing.T, path, heading string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no section %q", path, heading)
	}
	text = text[i:]
	if j := strings.Index(text[1:], "\n## "); j >= 0 {
		text = text[:j+1]
	}
	_, rest, ok := strings.Cut(text, "\n```yaml\n")
	if !ok {
		t.Fatalf("section %q has no ```yaml block", heading)
	}
	block, _, ok := strings.Cut(rest, "\n```")
	if !ok {
		t.Fatalf("section %q: the ```yaml block does not end", heading)
	}
	return block + "\n"
}

// stewardSection is the heading of docs/FEDERATED.md's walk-through of a
// hospital export run from one settings file.
const stewardSection = "## A hospital export, from one settings file"

// TestStewardWalkthrough runs docs/FEDERATED.md's walk-through of a
// hospital export (five folders, text treatments, steps from 0, NULL
// lactate) as TestFederatedWalkthrough runs its own: the export written
// by writeExport, the section's YAML block as settings.yaml, then every
// command in order, each printing what the docs show. The job is made
// without its sizes (the shape round finds H), and its policy equals the
// central solve's with the same file, bit for bit.
func TestStewardWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per command")
	}
	bin := federateBinary(t)
	doc := "../../docs/FEDERATED.md"
	cmds := walkthroughCommands(t, doc, stewardSection)
	settings := yamlBlock(t, doc, stewardSection)
	for _, k := range []string{"horizon", "actions", "num-states"} {
		if strings.Contains(settings, k+":") {
			t.Fatalf("the settings give %s: the walk-through's job takes it from the shape round", k)
		}
	}
	dir := t.TempDir()
	writeExport(t, filepath.Join(dir, "export"))
	writeFile(t, filepath.Join(dir, "settings.yaml"), settings)
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var initSeen, runSeen, evalSeen, solveSeen bool
	for _, c := range cmds {
		if len(c.want) == 0 {
			t.Errorf("the docs show no output for\n%s", c.cmd)
		}
		initSeen = initSeen || strings.HasPrefix(c.cmd, "grmdp federate init --config settings.yaml")
		runSeen = runSeen || strings.HasPrefix(c.cmd, "grmdp federate run ")
		evalSeen = evalSeen || strings.HasPrefix(c.cmd, "grmdp federate eval ")
		solveSeen = solveSeen || strings.HasPrefix(c.cmd, "grmdp solve --config settings.yaml")
		for _, flag := range []string{"--horizon", "--actions", "--num-states", "--nulls", "--first-step", "--action-labels"} {
			if strings.Contains(c.cmd, flag) {
				t.Errorf("%s\ngives %s on the command line: the walk-through keeps every setting in settings.yaml", c.cmd, flag)
			}
		}
		sh := exec.Command("sh", "-e", "-c", c.cmd)
		sh.Dir, sh.Env = dir, env
		var stdout, stderr bytes.Buffer
		sh.Stdout, sh.Stderr = &stdout, &stderr
		if err := sh.Run(); err != nil {
			t.Fatalf("%s\nfailed: %v\nstdout:\n%s\nstderr:\n%s", c.cmd, err, stdout.String(), stderr.String())
		}
		got := trimBlank(strings.Split(stdout.String(), "\n"))
		if !linesMatch(c.want, got) {
			t.Errorf("%s\nprints\n%s\nbut the docs show\n%s", c.cmd, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
	if !initSeen || !runSeen || !evalSeen || !solveSeen {
		t.Fatalf("the walk-through needs federate init, run and eval and solve, each with settings.yaml where it takes settings")
	}
	want := readPolicyT(t, filepath.Join(dir, "central.parquet"))
	got := readPolicyT(t, filepath.Join(dir, "job", "policy.parquet"))
	if got.H != 6 || got.A != 3 || strings.Join(got.ActionLabels, ",") != "fluids,none,vasopressors" {
		t.Fatalf("the job's policy has H = %d, A = %d, labels %v", got.H, got.A, got.ActionLabels)
	}
	samePolicies(t, "job/policy.parquet", want, got)
	tb, err := parquetio.Read(context.Background(), []string{filepath.Join(dir, "export")}, traj.Options{
		Columns: traj.Columns{Site: "hospital", Traj: "patient_id", Step: "t", Action: "treatment", Reward: "outcome"},
		State:   traj.StateSpec{Columns: []string{"lactate"}}, FirstStep: traj.StepsFrom0, Nulls: traj.NullsTruncate})
	if err != nil {
		t.Fatal(err)
	}
	sameDecisions(t, "job/policy.parquet", tb, want, got)
}
