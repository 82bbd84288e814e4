package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/solve"
)

func vantage6Command() *cli.Command {
	o := &Vantage6Options{}
	return leaf(&cli.Command{
		Name: "vantage6",
		Usage: "run a federated job's site part inside a vantage6 algorithm container: read INPUT_FILE and the node's database " +
			"(DATABASE_URI or <LABEL>_DATABASE_URI), write the message to OUTPUT_FILE",
		Description: "The node's administrator sets the site's thresholds as node-level environment variables GRMDP_MIN_COUNT and\n" +
			"GRMDP_MIN_ROWS (defaults 5 and 10); a task's input may ask for stricter thresholds, never looser ones.",
	}, o, []optionGroup{&o.Workers, &o.Memory}, func(ctx context.Context, o Vantage6Options, stdout, stderr io.Writer) error {
		return fedErr(runVantage6(ctx, o, os.Getenv, stdout, stderr))
	})
}

// Vantage6Options is what the command line of `grmdp vantage6` says; the
// task itself comes from the node's environment.
type Vantage6Options struct {
	Workers workersGroup
	Memory  memoryGroup
}

// runVantage6 runs the site part of the task the environment getenv
// reads describes.
func runVantage6(ctx context.Context, vo Vantage6Options, getenv func(string) string, stdout, stderr io.Writer) error {
	need := func(name string) (string, error) {
		v := getenv(name)
		if v == "" {
			return "", usagef("grmdp vantage6 runs inside a vantage6 node: %s is not set", name)
		}
		return v, nil
	}
	inPath, err := need("INPUT_FILE")
	if err != nil {
		return err
	}
	outPath, err := need("OUTPUT_FILE")
	if err != nil {
		return err
	}
	// OUTPUT_FILE is checked before any work, as every command's outputs
	// are (checkOutputs).
	if err := fileio.CheckOutput(outPath); err != nil {
		return fmt.Errorf("OUTPUT_FILE: %w", err)
	}
	if err := notAnInput("OUTPUT_FILE "+outPath, outPath, []input{{"INPUT_FILE " + inPath, inPath}}); err != nil {
		return err
	}
	b, err := os.ReadFile(inPath)
	if err != nil {
		return err
	}
	in, err := federate.ParseTask(b)
	if err != nil {
		return badInputf("INPUT_FILE %s: %w", inPath, err)
	}
	uriVar := "DATABASE_URI"
	if in.Database != "" {
		uriVar = strings.ToUpper(in.Database) + "_DATABASE_URI"
	}
	data := getenv(uriVar)
	if data == "" && in.Database == "" {
		data = getenv("DEFAULT_DATABASE_URI")
	}
	if data == "" {
		return usagef("%s is not set: the node gives its database's location there", uriVar)
	}
	var inputs []input
	for _, p := range dataset.Files([]string{data}) {
		inputs = append(inputs, input{uriVar + " " + p, p})
	}
	if err := notAnInput("OUTPUT_FILE "+outPath, outPath, inputs); err != nil {
		return err
	}
	// The job and state go to a job folder in the temporary folder, read
	// back as federate site reads them (the same checks).
	tmp := getenv("TEMPORARY_FOLDER")
	where := "TEMPORARY_FOLDER " + tmp
	if tmp == "" {
		tmp = os.TempDir()
		where = "the temporary folder " + tmp + " (TEMPORARY_FOLDER is not set)"
	}
	dir, err := os.MkdirTemp(tmp, "grmdp-job-")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return usagef("%s: cannot make the job's folder there (%v): the node sets TEMPORARY_FOLDER to a writable folder", where, err)
	}
	defer os.RemoveAll(dir)
	if err := in.Unpack(dir); errors.Is(err, federate.ErrBadTask) {
		return badInputf("INPUT_FILE: %w", err)
	} else if err != nil {
		return err
	}
	j, s, err := federate.Load(dir)
	if err != nil {
		return err
	}
	node, err := nodeDisclosure(getenv)
	if err != nil {
		return err
	}
	dc := solve.Disclosure{MinCount: max(node.MinCount, j.Disclosure.MinCount, in.MinCount), MinRows: max(node.MinRows, j.Disclosure.MinRows, in.MinRows)}
	o := dataset.Options{Workers: vo.Workers.Workers, MaxMemory: vo.Memory.Value, Disclosure: dc, Note: noteTo(stderr), Progress: barsTo(stderr)}
	msg, err := siteMessage(ctx, o, j, s, in.Site, []string{data}, dir, "")
	if err != nil {
		return err
	}
	n, err := dataset.WriteMessage(outPath, msg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "site %s, %s: wrote the message (%d bytes) to OUTPUT_FILE\n", quoteName(msg.Site), roundWords(j, msg), n)
	return nil
}

// nodeDisclosure reads the node-level thresholds GRMDP_MIN_COUNT and
// GRMDP_MIN_ROWS (defaults 5 and 10).
func nodeDisclosure(getenv func(string) string) (solve.Disclosure, error) {
	dc := solve.Disclosure{MinCount: fedMinCount, MinRows: fedMinRows}
	for _, x := range []struct {
		name string
		v    *int
	}{{"GRMDP_MIN_COUNT", &dc.MinCount}, {"GRMDP_MIN_ROWS", &dc.MinRows}} {
		if s := getenv(x.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return dc, usagef("%s=%q: want a nonnegative integer", x.name, s)
			}
			*x.v = n
		}
	}
	return dc, nil
}
