package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/io/fileio"
)

func hasFlag(cmd *cli.Command, name string) bool {
	return slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
}

// Flags that name files a command reads, directories whose every file it
// reads (a federated job's), and the files or directories it writes. An
// output flag whose usage placeholder is `DIR` names a directory.
var (
	inputFlags    = []string{"policy", "similarity", "clusters", "model", "config", "eval", "eval-clusters"}
	inputDirFlags = []string{"job"}
	outputFlags   = []string{"output", "model-out", "report", "messages"}
)

// checkOutputs refuses, before any work, a command line whose outputs
// cannot be written as asked (fileio.CheckPlanned: an existing output file
// that is not a regular file, an output directory that is not a
// directory), or whose output is one of the command's inputs (DATA,
// --policy, --clusters, --config, --model, a job's files, ...;
// fileio.CheckNotInputs). leaf runs it for every command, after --config
// had its say.
func checkOutputs(c *cli.Command) error {
	var outs []fileio.Named
	for _, f := range c.Flags {
		name := f.Names()[0]
		if !slices.Contains(outputFlags, name) || c.String(name) == "" {
			continue
		}
		v := c.String(name)
		if err := fileio.CheckPlanned(v, placeholderDir(f)); err != nil {
			return fmt.Errorf("--%s: %w", name, err)
		}
		outs = append(outs, fileio.Named{Name: "--" + name + " " + v, Path: v})
	}
	if len(outs) == 0 {
		return nil
	}
	// Each input as the message names it: the flag, or the flag or DATA
	// with the file when the argument names several.
	var inputs []fileio.Named
	for _, f := range inputFlags {
		if v := c.String(f); v != "" && hasFlag(c, f) {
			inputs = append(inputs, fileio.Named{Name: "--" + f, Path: v})
		}
	}
	for _, f := range inputDirFlags {
		if v := c.String(f); v != "" && hasFlag(c, f) {
			for _, p := range dataset.Files([]string{v}) {
				inputs = append(inputs, fileio.Named{Name: "--" + f + " " + p, Path: p})
			}
		}
	}
	for _, arg := range dataArgs(c) {
		for _, p := range dataset.Files([]string{arg}) {
			inputs = append(inputs, fileio.Named{Name: "DATA " + p, Path: p})
		}
	}
	return fileio.CheckNotInputs(outs, inputs)
}

// placeholderDir reports whether flag f's usage names its value `DIR`.
func placeholderDir(f cli.Flag) bool {
	df, ok := f.(cli.DocGenerationFlag)
	return ok && strings.Contains(df.GetUsage(), "`DIR`")
}

// settingsUsed records every flag's value as the command saw it.
func settingsUsed(c *cli.Command) map[string]string {
	out := map[string]string{"command": c.Name}
	for _, f := range c.Flags {
		name := f.Names()[0]
		if name == "help" {
			continue
		}
		v := c.Value(name)
		if l, ok := v.([]string); ok {
			v = strings.Join(l, ",")
		}
		out[name] = fmt.Sprint(v)
	}
	out["args"] = strings.Join(dataArgs(c), " ")
	return out
}

// notPolicySettings are the flags that cannot change a policy: where it is
// written, how many workers compute it, the memory limit, whether the data
// are read out of core, the form of stdout, the --config file (its values
// are recorded as the flags they set) and the reports written beside it
// (--c-path, compare's --model). A policy leaves them out, so that the same
// solve gives the same bytes under any other name and any --workers.
var notPolicySettings = []string{"output", "workers", "max-memory", "out-of-core", "json", "config", "c-path", "model"}

// policySettings is settingsUsed without notPolicySettings: every setting
// that can change the policy, as a policy records it.
func policySettings(c *cli.Command) map[string]string {
	out := settingsUsed(c)
	for _, k := range notPolicySettings {
		delete(out, k)
	}
	return out
}

// bar is a progress bar on stderr, drawn only when stderr is a terminal.
type bar struct{ pb *progressbar.ProgressBar }

func newBar(w io.Writer, what string) *bar {
	f, ok := w.(*os.File)
	return &bar{progressbar.NewOptions64(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(100_000_000), progressbar.OptionClearOnFinish(),
		progressbar.OptionSetVisibility(ok && term.IsTerminal(int(f.Fd()))))}
}

func (b *bar) SetTotal(n int64) { b.pb.ChangeMax64(n) }
func (b *bar) Add(n int64)      { _ = b.pb.Add64(n) }
func (b *bar) Finish()          { _ = b.pb.Finish() }
