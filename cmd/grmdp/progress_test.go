package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// eval's bootstrap and permutation progress bars go to a terminal only:
// with stderr a file (not a terminal) it holds no bar, no carriage return,
// only lines of messages ("grmdp: warning: ...").
func TestEvalProgressSilentWithoutTerminal(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "30,30,30")
	pol := filepath.Join(dir, "p.parquet")
	mustRun(t, "solve", "--method", "pooled", "-o", pol, data)
	f, err := os.Create(filepath.Join(dir, "stderr.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	code := run(context.Background(), []string{"grmdp", "eval", "--bootstrap", "5", "--permutations", "5", "--policy", pol, data}, &stdout, f)
	f.Close()
	if code != 0 {
		t.Fatalf("eval: exit %d\n%s", code, stdout.String())
	}
	if !strings.Contains(stdout.String(), "Delta_h") {
		t.Fatalf("eval ran no permutations:\n%s", stdout.String())
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(string(got), "\r█") {
		t.Errorf("stderr (not a terminal) holds a progress bar:\n%q", got)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(got), "\n"), "\n") {
		if line != "" && !strings.HasPrefix(line, "grmdp: ") {
			t.Errorf("stderr (not a terminal) holds a line that is not a message: %q", line)
		}
	}
}
