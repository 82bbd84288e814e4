//go:build unix

package main

// Fixtures of the federated tests that run jobs over hand-made sites'
// folders, and the steps of a federated evaluation compared with grmdp
// eval on all the rows.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// fedSiteNames are the sites of the hand-made federated data sets.
var fedSiteNames = []string{"north", "south", "west"}

// binnedJobFlags are federate init's flags for the hand-made sites'
// binned map (H = 4, A = 3, state columns lactate and sofa).
var binnedJobFlags = []string{"--features", "binned", "--bins", "lactate:1,2.5,4", "--bins", "sofa:2,6", "--horizon", "4", "--actions", "3"}

// addRow appends one row to c.
func addRow(c *traj.Chunk, site string, tr, h, action int, reward float64, state ...float64) {
	c.SiteStr = append(c.SiteStr, site)
	c.TrajInt = append(c.TrajInt, int64(tr))
	c.Step = append(c.Step, int64(h))
	c.ActionInt = append(c.ActionInt, int64(action))
	c.Reward = append(c.Reward, reward)
	c.State = append(c.State, state...)
}

// siteFile creates dir/site and returns it and the path of the site's
// data file in it, part.parquet.
func siteFile(t *testing.T, dir, site string) (folder, file string) {
	t.Helper()
	folder = filepath.Join(dir, site)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	return folder, filepath.Join(folder, "part.parquet")
}

// writeSiteTable builds the table of c's rows (A actions, H steps, the
// state columns cols, or one list column when list) and writes it to
// file.
func writeSiteTable(t *testing.T, file string, c *traj.Chunk, cols []string, list bool, A, H int) {
	t.Helper()
	b := traj.NewBuilder(traj.Options{State: traj.StateSpec{Columns: cols, List: list}, Actions: A, Horizon: H})
	if list {
		b.SetListWidth(c.W)
	}
	if err := b.Add(c); err != nil {
		t.Fatal(err)
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := parquetio.WriteTrajectories(file, tb, parquetio.WriteOptions{StateColumns: cols, List: list}); err != nil {
		t.Fatal(err)
	}
}

// fedInit runs federate init of a job at job for the sites names with
// the flags args.
func fedInit(t *testing.T, bin, job string, names []string, args ...string) {
	t.Helper()
	mustBin(t, bin, append([]string{"federate", "init", "--sites", strings.Join(names, ","), "-o", job}, args...)...)
}

// fedRun runs federate run of job over the sites' folders (site names[i]
// at dirs[i]) with the flags args and returns what it printed.
func fedRun(t *testing.T, bin, job string, names, dirs []string, args ...string) string {
	t.Helper()
	run := append([]string{"federate", "run", "--job", job}, args...)
	for i, n := range names {
		run = append(run, "--site", n+"="+dirs[i])
	}
	return mustBin(t, bin, run...)
}

// fedRunEval runs federate run --eval of the job's own policy, each part
// a separate process with one worker, with the flags args; it returns the
// policy's path and what the run printed.
func fedRunEval(t *testing.T, bin, job string, names, dirs []string, args ...string) (policy, out string) {
	t.Helper()
	policy = filepath.Join(job, federate.PolicyFile)
	return policy, fedRun(t, bin, job, names, dirs, append([]string{"--workers", "1", "--eval", policy}, args...)...)
}

// centralEval returns grmdp eval --json of policy on the rows of every
// site's folder, without bootstrap or permutation test, with the flags
// flags.
func centralEval(t *testing.T, policy string, dirs []string, flags ...string) string {
	t.Helper()
	args := append([]string{"eval", "--policy", policy, "--bootstrap", "0", "--permutations", "0", "--json"}, flags...)
	return mustRun(t, append(args, dirs...)...)
}

// evalBoth returns centralEval's output and federate eval --json of the
// job's evaluation.
func evalBoth(t *testing.T, bin, job, policy string, dirs []string, flags ...string) (central, federated string) {
	t.Helper()
	return centralEval(t, policy, dirs, flags...), mustBin(t, bin, "federate", "eval", "--job", job, "--json")
}

// decodeBoth decodes the central and the federated JSON outputs into want
// and got.
func decodeBoth(t *testing.T, central, federated string, want, got any) {
	t.Helper()
	if err := json.Unmarshal([]byte(central), want); err != nil {
		t.Fatalf("central: %v", err)
	}
	if err := json.Unmarshal([]byte(federated), got); err != nil {
		t.Fatalf("federated: %v", err)
	}
}

// vantage6Node makes a node's folder dir/node, with its temporary folder,
// and sets the environment vantage6 reads: its input, output, token and
// temporary files there, and dbVar naming the site's data db. It returns
// the paths of the input and the output files.
func vantage6Node(t *testing.T, dir, dbVar, db string) (input, output string) {
	t.Helper()
	node := filepath.Join(dir, "node")
	if err := os.MkdirAll(filepath.Join(node, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	input, output = filepath.Join(node, "input"), filepath.Join(node, "output")
	t.Setenv("INPUT_FILE", input)
	t.Setenv("OUTPUT_FILE", output)
	t.Setenv("TOKEN_FILE", filepath.Join(node, "token"))
	t.Setenv("TEMPORARY_FOLDER", filepath.Join(node, "tmp"))
	t.Setenv(dbVar, db)
	return input, output
}
