//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildGrmdp builds the command into dir and returns the binary's path.
func buildGrmdp(t *testing.T, dir string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build grmdp with: %v", err)
	}
	bin := filepath.Join(dir, "grmdp")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// started is a grmdp process and its outcome.
type started struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan error
}

func start(t *testing.T, bin string, args ...string) *started {
	t.Helper()
	p := &started{cmd: exec.Command(bin, args...), done: make(chan error, 1)}
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	return p
}

// running fails the test if the process has already exited.
func (p *started) running(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		t.Fatalf("%v exited (%v) before the signal; stderr: %s\nthe input is too small for this machine: enlarge it", p.cmd.Args, p.cmd.ProcessState, p.stderr.String())
	default:
	}
}

// wait waits for the process to exit and returns its exit code (-1 when a
// signal killed it).
func (p *started) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(60 * time.Second):
		p.cmd.Process.Kill()
		t.Fatalf("%v did not exit within 60s of the signal", p.cmd.Args)
		return 0
	}
}

// waitForTemp waits until a temporary file of out appears beside it: the
// write has begun.
func waitForTemp(t *testing.T, p *started, out string) string {
	t.Helper()
	pattern := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return m[0]
		}
		p.running(t)
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no temporary file %s appeared", pattern)
	return ""
}

// Nothing is lost: SIGINT and SIGTERM stop a run cleanly (exit 130, no
// output, temporary files removed), SIGKILL leaves no file at the output
// path (only, at worst, a temporary file beside it, which nothing reads),
// and no run ever modifies its inputs.
func TestSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and writes a 3M-row input (a few seconds)")
	}
	dir := t.TempDir()
	bin := buildGrmdp(t, dir)
	// 8 sites x 18750 trajectories x 20 steps = 3M rows, so that solve and
	// apply are still working when the signal comes.
	big := filepath.Join(dir, "big.parquet")
	traj := strings.TrimSuffix(strings.Repeat("18750,", 8), ",")
	if out, err := exec.Command(bin, "simulate", "--scenario", "benchmark", "--sites", "8", "--horizon", "20",
		"--trajectories", traj, "-o", big).CombinedOutput(); err != nil {
		t.Fatalf("simulate: %v\n%s", err, out)
	}
	// A policy for the same scenario, learned on a small sample.
	small := filepath.Join(dir, "small.parquet")
	policy := filepath.Join(dir, "policy.parquet")
	for _, args := range [][]string{
		{"simulate", "--scenario", "benchmark", "--sites", "8", "--horizon", "20", "--trajectories", "50,50,50,50,50,50,50,50", "-o", small},
		{"solve", "-o", policy, small},
	} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	bigState, policyState := stateOf(t, big), stateOf(t, policy)

	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		cmd  string
	}{
		{"solve SIGINT", syscall.SIGINT, "solve"},
		{"solve SIGTERM", syscall.SIGTERM, "solve"},
		{"apply SIGINT", syscall.SIGINT, "apply"},
		{"apply SIGTERM", syscall.SIGTERM, "apply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out.parquet")
			var p *started
			if tc.cmd == "solve" {
				// One worker: 0.7 s on 2 cores in 2026, so a signal after
				// 150 ms finds it reading even on a much faster machine.
				p = start(t, bin, "solve", "--workers", "1", "-o", out, big)
				time.Sleep(150 * time.Millisecond)
				p.running(t)
			} else {
				// Signal apply while it writes: its temporary file exists.
				p = start(t, bin, "apply", "--policy", policy, "-o", out, big)
				waitForTemp(t, p, out)
			}
			if err := p.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			code := p.wait(t)
			stderr := p.stderr.String()
			if code != exitInterrupted {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitInterrupted, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "interrupted") {
				t.Errorf("stderr is not one line saying interrupted: %q", stderr)
			}
			if left, _ := os.ReadDir(outDir); len(left) > 0 {
				t.Errorf("an interrupted %s left %v", tc.cmd, left)
			}
		})
	}

	t.Run("apply SIGKILL", func(t *testing.T) {
		outDir := t.TempDir()
		out := filepath.Join(outDir, "out.parquet")
		p := start(t, bin, "apply", "--policy", policy, "-o", out, big)
		tmp := waitForTemp(t, p, out)
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		p.wait(t)
		if _, err := os.Stat(out); err == nil {
			t.Errorf("a killed apply left a file at its output path %s", out)
		}
		// SIGKILL cannot be caught, so the temporary file may remain; it is
		// hidden and named after the output, and nothing reads it.
		if _, err := os.Stat(tmp); err == nil {
			t.Logf("SIGKILL left the temporary file %s (expected: a killed process cannot clean up)", filepath.Base(tmp))
		}
	})

	// Completed runs, and every interrupted one above, left the inputs as
	// they were.
	for _, args := range [][]string{
		{"apply", "--policy", policy, "-o", filepath.Join(dir, "applied.parquet"), small},
		{"eval", "--bootstrap", "5", "--permutations", "5", "--policy", policy, small},
	} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	checkUnchanged(t, big, bigState)
	checkUnchanged(t, policy, policyState)
}

// Inputs are opened read-only: solve, apply, eval, inspect and compare
// leave the data's and the policy's bytes and modification times as they
// were, and so does a failed run.
func TestInputsUnchanged(t *testing.T) {
	dir := t.TempDir()
	data, model := simulated(t, dir, "benchmark", "--trajectories", "40,30,50")
	policy := filepath.Join(dir, "p.parquet")
	mustRun(t, "solve", "-o", policy, data)
	// Make modification times old, so that a write within the same clock
	// tick would still show.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, f := range []string{data, policy, model} {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string]fileState{data: stateOf(t, data), policy: stateOf(t, policy), model: stateOf(t, model)}
	for i, args := range [][]string{
		{"solve", "-o", filepath.Join(dir, "p2.parquet"), data},
		{"apply", "--policy", policy, "-o", filepath.Join(dir, "a.parquet"), data},
		{"eval", "--bootstrap", "5", "--permutations", "5", "--model", model, "--policy", policy, data},
		{"inspect", data},
		{"compare", "-o", filepath.Join(dir, "cmp"), data},
		{"show", policy},
	} {
		t.Run(fmt.Sprint(args[0], i), func(t *testing.T) {
			mustRun(t, args...)
		})
	}
	// An output path that is an input is refused, not overwritten.
	if code, _, _ := grmdp(t, "apply", "--policy", policy, "-o", data, data); code == exitOK {
		t.Errorf("apply -o DATA DATA succeeded")
	}
	for f, s := range before {
		checkUnchanged(t, f, s)
	}
}
