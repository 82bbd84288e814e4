package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/internal/textfmt"
)

func vantage6Command() *cli.Command {
	o := &Vantage6Options{Getenv: os.Getenv}
	return leaf(&cli.Command{
		Name: "vantage6",
		Usage: "run a federated job's site part inside a vantage6 algorithm container: read INPUT_FILE and the node's database " +
			"(DATABASE_URI or <LABEL>_DATABASE_URI), write the message to OUTPUT_FILE",
		Description: "The node's administrator sets the site's thresholds as node-level environment variables GRMDP_MIN_COUNT and\n" +
			"GRMDP_MIN_ROWS (defaults 5 and 10); a task's input may ask for stricter thresholds, never looser ones.",
	}, o, []optionGroup{&o.Workers, &o.Memory}, runVantage6)
}

// Vantage6Options is what the command line of `grmdp vantage6` says; the
// task itself comes from the node's environment, read with Getenv.
type Vantage6Options struct {
	Workers workersGroup
	Memory  memoryGroup
	Getenv  func(string) string
}

// runVantage6 runs the site part of the task the environment describes.
func runVantage6(ctx context.Context, vo Vantage6Options, stdout, stderr io.Writer) error {
	v, err := dataset.OpenVantage6(vo.Getenv)
	if err != nil {
		return dataErr(err)
	}
	defer v.Close()
	o := dataset.Options{Workers: vo.Workers.Workers, MaxMemory: vo.Memory.Value, Disclosure: v.Disclosure, Note: noteTo(stderr), Progress: barsTo(stderr)}
	msg, err := siteMessage(ctx, o, v.Site, v.Data)
	if err != nil {
		return err
	}
	n, err := dataset.WriteMessage(v.Output, msg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "site %s, %s: wrote the message (%d bytes) to OUTPUT_FILE\n", textfmt.Quote(msg.Site), msg.RoundName(v.Site.Job), n)
	return nil
}
