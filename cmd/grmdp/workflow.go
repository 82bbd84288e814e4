package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"strings"

	"github.com/urfave/cli/v3"
	"gopkg.in/yaml.v3"

	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/io/parquetio"
)

// One workflow: one --config file for every command, the data paths in it,
// output directories made the same way by every command, and the column
// names a policy was learned with reused by apply and eval.

func isHidden(f cli.Flag) bool {
	h, ok := f.(cli.VisibleFlag)
	return ok && !h.IsVisible()
}

// applyConfig reads the --config file path into the command's flags
// (flags on the command line win): the top level of the file applies to
// every command, a section named after the command as on the command line
// (solve:, federate site:) overrides it, a setting that only other
// commands have is ignored (noted on stderr), and a setting no command has
// is a usage error. Lists are accepted for every list-valued flag. The
// file's data setting is the DATA of a command that reads data and is
// given none (dataArgs).
func applyConfig(c *cli.Command, path string) error {
	doc, err := readConfig(path)
	if err != nil {
		return err
	}
	command := strings.Join(c.Path()[1:], " ")
	all, known := configurableFlags(c.Root())
	merged, err := mergeConfigSection(path, doc, all, command)
	if err != nil {
		return err
	}
	values, data, ignored, err := sortConfigSettings(c, path, merged, known)
	if err != nil {
		return err
	}
	for _, k := range sortedKeys(values) {
		if c.IsSet(k) {
			continue
		}
		if err := c.Set(k, values[k]); err != nil {
			return usagef("--config %s: %s: %v", path, k, err)
		}
	}
	if len(ignored) > 0 {
		verb := map[bool]string{false: "does", true: "do"}[len(ignored) > 1]
		fmt.Fprintf(c.Root().ErrWriter, "grmdp: note: --config %s: %s %s not apply to %s, ignored\n", path, strings.Join(ignored, ", "), verb, command)
	}
	if len(data) > 0 {
		c.Metadata = map[string]any{configData: data}
	}
	return nil
}

// readConfig reads the --config file path as a mapping of names to YAML
// values.
func readConfig(path string) (map[string]yaml.Node, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, usagef("--config %s: cannot read: %v", path, err)
	}
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, usagef("--config %s: not a YAML mapping of flag names to values: %v", path, err)
	}
	return doc, nil
}

// configurableFlags lists, for every command under root (subcommands as
// "parent sub"), the names of its flags that a --config file may set
// (all), and the names any command has (known).
func configurableFlags(root *cli.Command) (all map[string]map[string]bool, known map[string]bool) {
	all, known = map[string]map[string]bool{}, map[string]bool{}
	eachCommand("", root.Commands, func(name string, cmd *cli.Command) {
		all[name] = map[string]bool{}
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				all[name][n], known[n] = !isHidden(f), known[n] || !isHidden(f)
			}
		}
	})
	return all, known
}

// mergeConfigSection gives the top level of doc with command's own
// section over it. Every section, the command's or another's, must be a
// mapping of settings its command has (or data).
func mergeConfigSection(path string, doc map[string]yaml.Node, all map[string]map[string]bool, command string) (map[string]yaml.Node, error) {
	merged := map[string]yaml.Node{}
	var section map[string]yaml.Node
	for _, k := range sortedKeys(doc) {
		v := doc[k]
		set, isCommand := all[k]
		if !isCommand {
			merged[k] = v
			continue
		}
		var sec map[string]yaml.Node
		if v.Kind != yaml.MappingNode || v.Decode(&sec) != nil {
			return nil, usagef("--config %s: section %s: not a mapping of %s's flag names to values", path, k, k)
		}
		for _, sk := range sortedKeys(sec) {
			if sk != "data" && !set[sk] {
				return nil, usagef("--config %s: section %s: unknown setting %q", path, k, sk)
			}
		}
		if k == command {
			section = sec
		}
	}
	maps.Copy(merged, section)
	return merged, nil
}

// ownFlags gives c's visible flags by each of their names, and the names
// (first name only, without config and help) a usage error lists.
func ownFlags(c *cli.Command) (own map[string]cli.Flag, names []string) {
	own = map[string]cli.Flag{}
	for _, f := range c.Flags {
		if isHidden(f) {
			continue
		}
		for _, n := range f.Names() {
			own[n] = f
		}
		if n := f.Names()[0]; n != "config" && n != "help" {
			names = append(names, n)
		}
	}
	return own, names
}

// sortConfigSettings sorts the merged settings into the values of c's
// flags (by first name), the data paths (when c reads DATA), and the
// settings only other commands have (ignored); a setting no command has
// is a usage error.
func sortConfigSettings(c *cli.Command, path string, merged map[string]yaml.Node, known map[string]bool) (values map[string]string, data, ignored []string, err error) {
	own, names := ownFlags(c)
	values = map[string]string{}
	for _, k := range sortedKeys(merged) {
		node, f := merged[k], own[k]
		switch {
		case f == nil && k == "data" && strings.Contains(c.ArgsUsage, "DATA"):
			if data, err = stringList(&node); err != nil {
				return nil, nil, nil, usagef("--config %s: data: %v", path, err)
			}
		case f == nil && (k == "data" || known[k]):
			ignored = append(ignored, k)
		case f == nil:
			return nil, nil, nil, usagef("--config %s: unknown setting %q: the settings are the command's flag names (%s)", path, k, strings.Join(names, ", "))
		default:
			if values[f.Names()[0]], err = configValue(f, &node); err != nil {
				return nil, nil, nil, usagef("--config %s: %s: %v", path, k, err)
			}
		}
	}
	return values, data, ignored, nil
}

// configValue converts a setting to the value the flag f is set to: for a
// list-valued flag the list, items whole (a YAML map COL: spec becoming
// COL:spec, in the file's order, for --bins); for a string flag given a
// list one comma-separated value (--state); otherwise the scalar as
// written.
func configValue(f cli.Flag, node *yaml.Node) (string, error) {
	_, isList := f.(*cli.StringSliceFlag)
	_, isString := f.(*cli.StringFlag)
	var vals []string
	if isList && node.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(node.Content); i += 2 {
			items, err := stringList(node.Content[i+1])
			if err != nil {
				return "", err
			}
			vals = append(vals, node.Content[i].Value+":"+strings.Join(items, ","))
		}
	} else if items, err := stringList(node); err != nil {
		return "", err
	} else {
		vals = items
	}
	switch {
	case isList:
		return cli.NewStringSlice(vals...).Serialize(), nil
	case node.Kind == yaml.ScalarNode:
		return node.Value, nil
	case isString:
		return joinList(vals), nil
	}
	return "", errors.New("want a value")
}

// joinList writes items as one comma-separated flag value that splitList
// reads back item for item: an item holding a comma or a double quote is
// quoted as in CSV ("Boston, MA" becomes "\"Boston, MA\"").
func joinList(items []string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(items)
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}

// splitList reads a comma-separated flag value (--sites A,B,C, --state
// COLS) into its items, trimmed: a double-quoted item may hold commas, as
// in CSV and as joinList writes a --config list.
func splitList(s string) ([]string, error) {
	r := csv.NewReader(strings.NewReader(s))
	r.LazyQuotes, r.TrimLeadingSpace = true, true
	items, err := r.Read()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%q is not a comma-separated list: %v", s, err)
	}
	if _, err := r.Read(); err != io.EOF {
		return nil, fmt.Errorf("%q: a list is one line", s)
	}
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return items, nil
}

// stringList reads a scalar or a list of scalars as strings.
func stringList(node *yaml.Node) ([]string, error) {
	switch node.Kind {
	case yaml.ScalarNode:
		return []string{node.Value}, nil
	case yaml.SequenceNode:
		var out []string
		for _, n := range node.Content {
			if n.Kind != yaml.ScalarNode {
				return nil, errors.New("want a value or a list of values")
			}
			out = append(out, n.Value)
		}
		return out, nil
	}
	return nil, errors.New("want a value or a list of values")
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
