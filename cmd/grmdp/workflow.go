package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/internal/flagfile"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/io/parquetio"
)

// One workflow: one --config file for every command, with the data paths
// in it; output directories made the same way by every command; the
// command line as a report records it.

// withConfig lets every flag of cmd be set from a YAML file given with
// --config, so a batch job is one reviewed file. Flags on the command line
// win over the file; one file can serve every command (applyConfig).
func withConfig(cmd *cli.Command) *cli.Command {
	cmd.Flags = append(cmd.Flags, &cli.StringFlag{Name: "config", Usage: "read flag values from this YAML `FILE` (command-line flags win)"})
	cmd.Before = func(ctx context.Context, c *cli.Command) (context.Context, error) {
		if path := c.String("config"); path != "" {
			if err := applyConfig(c, path); err != nil {
				return ctx, err
			}
		}
		noteSkippedFiles(dataArgs(c), c.Root().ErrWriter)
		return ctx, nil
	}
	return cmd
}

// applyConfig sets c's flags from the --config file path (package
// flagfile), notes on stderr the settings only other commands have, and
// keeps the file's data setting as the DATA of a command given none
// (dataArgs). A file it cannot apply is a usage error.
func applyConfig(c *cli.Command, path string) error {
	f, err := flagfile.Read(path)
	var res flagfile.Result
	if err == nil {
		res, err = f.Apply(c, flagfile.Options{Args: "data", FileFlag: "config"})
	}
	var fe *flagfile.Error
	if errors.As(err, &fe) {
		return usagef("--config %v", fe)
	}
	if err != nil {
		return err
	}
	if n := len(res.Ignored); n > 0 {
		verb := map[bool]string{false: "does", true: "do"}[n > 1]
		fmt.Fprintf(c.Root().ErrWriter, "grmdp: note: --config %s: %s %s not apply to %s, ignored\n", path, strings.Join(res.Ignored, ", "), verb, strings.Join(c.Path()[1:], " "))
	}
	if len(res.Args) > 0 {
		c.Metadata = map[string]any{configData: res.Args}
	}
	return nil
}

// configData is the command's Metadata key of its --config file's data
// setting.
const configData = "config data"

// dataArgs are the command's DATA: its arguments, or when it has none the
// data setting of its --config file.
func dataArgs(c *cli.Command) []string {
	if c.NArg() > 0 {
		return c.Args().Slice()
	}
	if d, ok := c.Metadata[configData].([]string); ok {
		return d
	}
	return nil
}

// noteSkippedFiles notes on stderr, in one line, the files inside DATA
// directories that are not read because they are not Parquet
// (parquetio.Skipped).
func noteSkippedFiles(args []string, stderr io.Writer) {
	n, example := parquetio.Skipped(args)
	switch n {
	case 0:
	case 1:
		fmt.Fprintf(stderr, "grmdp: note: skipped 1 file that is not .parquet in the DATA directories: %s\n", example)
	default:
		fmt.Fprintf(stderr, "grmdp: note: skipped %d files that are not .parquet in the DATA directories, such as %s\n", n, example)
	}
}

type outputDirsKey struct{}

// outputDirs are the directories the run of ctx creates for its outputs,
// removed again (when empty) if the run fails or is interrupted.
func outputDirs(ctx context.Context) *fileio.Dirs {
	if d, ok := ctx.Value(outputDirsKey{}).(*fileio.Dirs); ok {
		return d
	}
	return &fileio.Dirs{}
}

// makeOutputDir creates the output directory dir and its missing parents
// (fileio.Dirs.MkdirAll), as every command does for its outputs.
func makeOutputDir(ctx context.Context, dir string) error { return outputDirs(ctx).MkdirAll(dir) }

// prepareOutput creates the directory of the output file path and checks
// that path can be written (fileio.Dirs.Prepare).
func prepareOutput(ctx context.Context, path string) error { return outputDirs(ctx).Prepare(path) }

// commandLine is the command that ran, as a report records it: the
// program is named grmdp whatever path it ran from (go run builds it in a
// temporary directory).
func commandLine(c *cli.Command) string {
	args, _ := c.Root().Metadata["args"].([]string)
	parts := []string{"grmdp"}
	for _, a := range args[min(1, len(args)):] {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$*?[]\\;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// versionCommand prints the version, as --version does.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version",
		Action: func(ctx context.Context, c *cli.Command) error {
			fmt.Fprintf(c.Root().Writer, "grmdp version %s\n", version)
			return nil
		},
	}
}
