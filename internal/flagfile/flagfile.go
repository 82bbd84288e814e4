package flagfile

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"
	"gopkg.in/yaml.v3"
)

// Error is a file that cannot be read or applied. Its message is the
// file's path and what is wrong, as in
//
//	run.yaml: unknown setting "lamda": the settings are the command's flag names (...)
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func errorf(path, format string, args ...any) error {
	return &Error{path, fmt.Errorf(format, args...)}
}

// File is a flag file as read: a mapping of names to YAML values.
type File struct {
	Path     string
	settings map[string]yaml.Node
}

// Read reads the flag file at path.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, errorf(path, "cannot read: %w", err)
	}
	return Parse(path, b)
}

// Parse reads data as the flag file at path; path only names the file in
// errors.
func Parse(path string, data []byte) (*File, error) {
	f := &File{Path: path}
	if err := yaml.Unmarshal(data, &f.settings); err != nil {
		return nil, errorf(path, "not a YAML mapping of flag names to values: %v", err)
	}
	return f, nil
}

// Options are what Apply needs to know of the program beyond its
// commands.
type Options struct {
	// Args names the setting that gives a command its arguments ("data"):
	// a command whose ArgsUsage names it in capitals ("DATA...") takes it
	// as [Result.Args]. Empty: no setting gives arguments.
	Args string
	// FileFlag names the flag that names the file ("config"). It is left
	// out, with help, of the flag names an unknown setting's error lists.
	FileFlag string
}

func (o Options) isArgs(name string) bool { return o.Args != "" && name == o.Args }

// Result is what Apply found in the file besides flag values.
type Result struct {
	// Args is the Options.Args setting as a list, for a command that takes
	// it; nil otherwise. Whether arguments on the command line win is the
	// program's choice.
	Args []string
	// Ignored are the settings only other commands have, sorted.
	Ignored []string
}

// Apply sets every flag of cmd that the file sets and the command line
// does not, by the rules of the package doc. It is meant for cmd's Before
// hook: cmd's flags are parsed and its parents are known. cmd's flags are
// set in the order of their names; on an error some may be set.
func (f *File) Apply(cmd *cli.Command, o Options) (Result, error) {
	all, known := settable(cmd.Root())
	merged, err := f.merge(all, strings.Join(cmd.Path()[1:], " "), o)
	if err != nil {
		return Result{}, err
	}
	values, res, err := f.classify(cmd, merged, known, o)
	if err != nil {
		return Result{}, err
	}
	for _, k := range sortedKeys(values) {
		if cmd.IsSet(k) {
			continue
		}
		if err := cmd.Set(k, values[k]); err != nil {
			return Result{}, errorf(f.Path, "%s: %v", k, err)
		}
	}
	return res, nil
}

// settable lists, for every command under root (subcommands as
// "parent sub"), the names of its flags that a file may set (all), and
// the names any command has (known).
func settable(root *cli.Command) (all map[string]map[string]bool, known map[string]bool) {
	all, known = map[string]map[string]bool{}, map[string]bool{}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			name := strings.TrimSpace(prefix + " " + cmd.Name)
			all[name] = map[string]bool{}
			for _, fl := range cmd.Flags {
				for _, n := range fl.Names() {
					all[name][n], known[n] = !isHidden(fl), known[n] || !isHidden(fl)
				}
			}
			walk(name, cmd.Commands)
		}
	}
	walk("", root.Commands)
	return all, known
}

func isHidden(fl cli.Flag) bool {
	h, ok := fl.(cli.VisibleFlag)
	return ok && !h.IsVisible()
}

// merge gives the top level of the file with command's own section over
// it, after checking every section.
func (f *File) merge(all map[string]map[string]bool, command string, o Options) (map[string]yaml.Node, error) {
	merged := map[string]yaml.Node{}
	var section map[string]yaml.Node
	for _, k := range sortedKeys(f.settings) {
		v := f.settings[k]
		set, isCommand := all[k]
		if !isCommand {
			merged[k] = v
			continue
		}
		var sec map[string]yaml.Node
		if v.Kind != yaml.MappingNode || v.Decode(&sec) != nil {
			return nil, errorf(f.Path, "section %s: not a mapping of %s's flag names to values", k, k)
		}
		for _, sk := range sortedKeys(sec) {
			if !o.isArgs(sk) && !set[sk] {
				return nil, errorf(f.Path, "section %s: unknown setting %q", k, sk)
			}
		}
		if k == command {
			section = sec
		}
	}
	maps.Copy(merged, section)
	return merged, nil
}

// classify sorts the merged settings into the values of cmd's flags (by
// first name), its arguments and the settings only other commands have.
func (f *File) classify(cmd *cli.Command, merged map[string]yaml.Node, known map[string]bool, o Options) (values map[string]string, res Result, err error) {
	own, names := ownFlags(cmd, o.FileFlag)
	values = map[string]string{}
	for _, k := range sortedKeys(merged) {
		node, fl := merged[k], own[k]
		switch {
		case fl == nil && o.isArgs(k) && strings.Contains(cmd.ArgsUsage, strings.ToUpper(k)):
			if res.Args, err = stringList(&node); err != nil {
				return nil, Result{}, errorf(f.Path, "%s: %v", k, err)
			}
		case fl == nil && (o.isArgs(k) || known[k]):
			res.Ignored = append(res.Ignored, k)
		case fl == nil:
			return nil, Result{}, errorf(f.Path, "unknown setting %q: the settings are the command's flag names (%s)", k, strings.Join(names, ", "))
		default:
			if values[fl.Names()[0]], err = value(fl, &node); err != nil {
				return nil, Result{}, errorf(f.Path, "%s: %v", k, err)
			}
		}
	}
	return values, res, nil
}

// ownFlags gives cmd's visible flags by each of their names, and the
// first names, but the file flag's and help's, that an unknown setting's
// error lists.
func ownFlags(cmd *cli.Command, fileFlag string) (own map[string]cli.Flag, names []string) {
	own = map[string]cli.Flag{}
	for _, fl := range cmd.Flags {
		if isHidden(fl) {
			continue
		}
		for _, n := range fl.Names() {
			own[n] = fl
		}
		if n := fl.Names()[0]; n != fileFlag && n != "help" {
			names = append(names, n)
		}
	}
	return own, names
}

// value converts a setting to the value the flag fl is set to: for a
// list-valued flag the list, items whole (a YAML mapping's entries
// becoming KEY:v1,v2 in the file's order); for a string flag given a list
// one comma-separated value (JoinList); otherwise the scalar as written.
func value(fl cli.Flag, node *yaml.Node) (string, error) {
	_, isList := fl.(*cli.StringSliceFlag)
	_, isString := fl.(*cli.StringFlag)
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
	case isList && len(vals) == 0:
		return "", errors.New("an empty list: give at least one value, or leave the setting out")
	case isList:
		return cli.NewStringSlice(vals...).Serialize(), nil
	case node.Kind == yaml.ScalarNode:
		return node.Value, nil
	case isString:
		return JoinList(vals), nil
	}
	return "", errors.New("want a value")
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

func sortedKeys[M ~map[string]V, V any](m M) []string { return slices.Sorted(maps.Keys(m)) }
