package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/federate"
)

func fedRunCommand() *cli.Command {
	o := &FederateRunOptions{Workers: workersGroup{usage: "parallel workers of each process (default: all cores); results do not depend on it"}}
	return leaf(&cli.Command{
		Name: "run",
		Usage: "play a whole job locally: each site's part and each step as a separate grmdp process, " +
			"exchanging only the job's files and the messages",
		ArgsUsage: " ",
	}, o, []optionGroup{own{[]cli.Flag{
		&cli.StringFlag{Name: "job", Usage: "the job `DIR` (made by grmdp federate init)", Required: true},
		&cli.StringSliceFlag{Name: "site", Usage: "a site and its data, `NAME=DATA` (a file, directory or glob); one per site of the job", Required: true},
		&cli.StringFlag{Name: "messages", Usage: "`DIR` to keep the messages in (default: JOB/messages)"},
		&cli.StringFlag{Name: "eval", Usage: "then evaluate policy `FILE` (e.g. JOB/policy.parquet) in evaluation rounds, as federate eval --policy FILE opens them"},
		&cli.StringFlag{Name: "eval-clusters", Usage: "with --eval: cluster `FILE` for Delta_h, as federate eval --clusters"},
		&cli.BoolFlag{Name: "no-cache", Usage: "read every site's data again at every round (by default each site keeps its rows " +
			"in a temporary cache of its own, federate site --cache, removed when the run ends)"},
	}, func(c *cli.Context) error { return o.parse(c) }}, &o.Workers}, func(ctx context.Context, o FederateRunOptions, stdout, stderr io.Writer) error {
		return fedErr(runFederateRun(ctx, o, stdout, stderr))
	})
}

// FederateRunOptions is what the command line of `grmdp federate run`
// says.
type FederateRunOptions struct {
	Job string
	// Data is each site's data argument, by site name.
	Data map[string]string
	// Messages is the directory of the messages ("": JOB/messages).
	Messages string
	// Eval, if not "", is a policy to evaluate after the job, with the
	// cluster file EvalClusters.
	Eval, EvalClusters string
	NoCache            bool
	// Workers is passed to every site's process.
	Workers workersGroup
}

func (o *FederateRunOptions) parse(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usagef("federate run takes flags only (got %v): name each site's data with --site NAME=DATA", c.Args().Slice())
	}
	o.Job, o.Messages, o.Eval, o.EvalClusters, o.NoCache = c.String("job"), c.String("messages"), c.String("eval"), c.String("eval-clusters"), c.Bool("no-cache")
	if o.EvalClusters != "" && o.Eval == "" {
		return usagef("--eval-clusters is for --eval POLICY")
	}
	o.Data = map[string]string{}
	for _, kv := range c.StringSlice("site") {
		name, path, ok := strings.Cut(kv, "=")
		if !ok || name == "" || path == "" {
			return usagef("--site %q: want NAME=DATA", kv)
		}
		if _, dup := o.Data[name]; dup {
			return usagef("--site %s is given twice", name)
		}
		o.Data[name] = path
	}
	return nil
}

func runFederateRun(ctx context.Context, o FederateRunOptions, stdout, stderr io.Writer) error {
	dir, data := o.Job, o.Data
	j, _, err := federate.Load(dir)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(data) {
		if !slices.Contains(j.Sites, name) {
			return usagef("--site %s: the job's sites are %s", quoteName(name), joinList(quoteNames(j.Sites)))
		}
	}
	for _, site := range j.Sites {
		if _, ok := data[site]; !ok {
			return usagef("no --site %s=DATA: every site of the job needs its data", site)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("federate run: cannot find this program to start its parts: %w", err)
	}
	msgDir := o.Messages
	if msgDir == "" {
		msgDir = filepath.Join(dir, "messages")
	}
	workers := []string{}
	if w := o.Workers.Workers; w > 0 {
		workers = []string{"--workers", strconv.Itoa(w)}
	}
	caches, err := siteCaches(o.NoCache)
	if err != nil {
		return err
	}
	defer caches.remove()
	lr := &localRun{exe: exe, dir: dir, data: data, workers: workers, caches: caches, stdout: stdout, stderr: stderr}
	if err := federate.Play(ctx, dir, msgDir, lr); err != nil || o.Eval == "" {
		return err
	}
	open := []string{"federate", "eval", "--job", dir, "--policy", o.Eval}
	if o.EvalClusters != "" {
		open = append(open, "--clusters", o.EvalClusters)
	}
	if err := part(ctx, exe, open, stdout, stderr); err != nil {
		return fmt.Errorf("coordinator, opening the evaluation: %w", err)
	}
	// The sites read their data afresh each evaluation round: such a round
	// reads every step, so the site cache, which spares a round the steps
	// it does not read, saves nothing and is not used.
	lr.caches = &runCaches{}
	return federate.PlayEval(ctx, dir, msgDir, lr)
}

// localRun plays every part of a job as separate processes of this
// program, exchanging only the protocol's files.
type localRun struct {
	exe, dir       string
	data           map[string]string // each site's data argument
	workers        []string          // the --workers flag, or none
	caches         *runCaches        // each site's --cache flag
	stdout, stderr io.Writer
}

// Site runs grmdp federate site for site i of job j.
func (lr *localRun) Site(ctx context.Context, j *federate.Job, i int, out string) error {
	site := j.Sites[i]
	args := append([]string{"federate", "site", "--job", lr.dir, "--site", site, "-o", out,
		"--min-count", strconv.Itoa(j.Disclosure.MinCount), "--min-rows", strconv.Itoa(j.Disclosure.MinRows)}, lr.workers...)
	args = append(args, lr.caches.flags(i)...)
	return part(ctx, lr.exe, append(args, lr.data[site]), lr.stdout, lr.stderr)
}

// Step runs grmdp federate step on the round's messages.
func (lr *localRun) Step(ctx context.Context, _ *federate.Job, msgs []string) error {
	return part(ctx, lr.exe, append([]string{"federate", "step", "--job", lr.dir}, msgs...), lr.stdout, lr.stderr)
}

// part runs one part of the job as a separate process of this program;
// its failure keeps its exit code's meaning and its one-line message.
func part(ctx context.Context, exe string, args []string, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, exe, args...)
	var errBuf bytes.Buffer
	cmd.Stdout = stdout
	cmd.Stderr = &errBuf
	err := cmd.Run()
	if err == nil {
		stderr.Write(errBuf.Bytes())
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	msg := strings.TrimSpace(errBuf.String())
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		stderr.Write([]byte(msg[:i+1]))
		msg = msg[i+1:]
	}
	msg = strings.TrimPrefix(msg, "grmdp: ")
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		switch ee.ExitCode() {
		case exitUsage:
			return usagef("%s", msg)
		case exitBadData:
			return badInputf("%s", msg)
		case exitInterrupted:
			return context.Canceled
		}
	}
	if msg == "" {
		return err
	}
	return errors.New(msg)
}

// runCaches are the site caches of a federate run: one temporary
// directory per site under root, removed when the run ends; none (root
// "") with --no-cache.
type runCaches struct{ root string }

func siteCaches(none bool) (*runCaches, error) {
	if none {
		return &runCaches{}, nil
	}
	root, err := os.MkdirTemp("", "grmdp-site-cache-")
	if err != nil {
		return nil, fmt.Errorf("federate run: a temporary directory for the site caches: %w", err)
	}
	return &runCaches{root: root}, nil
}

// flags returns site i's --cache flag, or none.
func (rc *runCaches) flags(i int) []string {
	if rc.root == "" {
		return nil
	}
	return []string{"--cache", filepath.Join(rc.root, fmt.Sprintf("site-%03d", i))}
}

func (rc *runCaches) remove() {
	if rc.root != "" {
		os.RemoveAll(rc.root)
	}
}
