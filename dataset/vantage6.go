package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/solve"
)

// Vantage6 is a vantage6 task as a node runs it in an algorithm
// container: the site's part of a federated job's round, described by
// the node's environment.
type Vantage6 struct {
	// Site is the site's part of the round, from the job and state the
	// task's input carries (and, for an evaluation round, the evaluation
	// and its policy), unpacked in a temporary job folder.
	Site Site
	// Data is the node's database: a Parquet file, directory or glob.
	Data []string
	// Output is the file the message goes to (OUTPUT_FILE).
	Output string
	// Disclosure is the largest of the node's thresholds
	// (GRMDP_MIN_COUNT and GRMDP_MIN_ROWS, defaults
	// [federate.DefaultMinCount] and [federate.DefaultMinRows]), the
	// job's and the input's: a task can make them stricter, never looser.
	Disclosure solve.Disclosure
	dir        string
}

// EnvError is a node environment a vantage6 task cannot run in: a
// variable not set, or set to what cannot serve.
type EnvError struct{ msg string }

func (e *EnvError) Error() string { return e.msg }

func envErrorf(format string, args ...any) error {
	return &EnvError{fmt.Sprintf(format, args...)}
}

// OpenVantage6 reads the task of a vantage6 node from its environment
// env (os.Getenv in the container): the input (INPUT_FILE, JSON: a
// [federate.Task]), the output file (OUTPUT_FILE, checked before any
// work: writable, and none of the inputs), the database
// (<LABEL>_DATABASE_URI for the input's database label, or DATABASE_URI,
// then DEFAULT_DATABASE_URI, without one) and the thresholds. It unpacks
// the job into a folder in TEMPORARY_FOLDER (or the system's temporary
// folder), which Close removes. An environment that cannot serve is an
// [*EnvError]; an input that is not a task, an [ErrBadInput].
func OpenVantage6(env func(string) string) (*Vantage6, error) {
	need := func(name string) (string, error) {
		v := env(name)
		if v == "" {
			return "", envErrorf("grmdp vantage6 runs inside a vantage6 node: %s is not set", name)
		}
		return v, nil
	}
	inPath, err := need("INPUT_FILE")
	if err != nil {
		return nil, err
	}
	outPath, err := need("OUTPUT_FILE")
	if err != nil {
		return nil, err
	}
	if err := fileio.CheckOutput(outPath); err != nil {
		return nil, fmt.Errorf("OUTPUT_FILE: %w", err)
	}
	if err := notAnInput(outPath, "INPUT_FILE", []string{inPath}); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(inPath)
	if err != nil {
		return nil, err
	}
	task, err := federate.ParseTask(b)
	if err != nil {
		return nil, badInputf("INPUT_FILE %s: %w", inPath, err)
	}
	uriVar := "DATABASE_URI"
	if task.Database != "" {
		uriVar = strings.ToUpper(task.Database) + "_DATABASE_URI"
	}
	data := env(uriVar)
	if data == "" && task.Database == "" {
		data = env("DEFAULT_DATABASE_URI")
	}
	if data == "" {
		return nil, envErrorf("%s is not set: the node gives its database's location there", uriVar)
	}
	if err := notAnInput(outPath, uriVar, Files([]string{data})); err != nil {
		return nil, err
	}
	node, err := nodeDisclosure(env)
	if err != nil {
		return nil, err
	}
	// The job and state go to a job folder in the temporary folder, read
	// back as a site reads a coordinator's (the same checks).
	tmp := env("TEMPORARY_FOLDER")
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
		return nil, envErrorf("%s: cannot make the job's folder there (%v): the node sets TEMPORARY_FOLDER to a writable folder", where, err)
	}
	v := &Vantage6{Data: []string{data}, Output: outPath, dir: dir}
	if err := task.Unpack(dir); errors.Is(err, federate.ErrBadTask) {
		v.Close()
		return nil, badInputf("INPUT_FILE: %w", err)
	} else if err != nil {
		v.Close()
		return nil, err
	}
	if v.Site, err = OpenSite(dir, task.Site, ""); err != nil {
		v.Close()
		return nil, err
	}
	j := v.Site.Job
	v.Disclosure = solve.Disclosure{MinCount: max(node.MinCount, j.Disclosure.MinCount, task.MinCount), MinRows: max(node.MinRows, j.Disclosure.MinRows, task.MinRows)}
	return v, nil
}

// Close removes the task's temporary job folder.
func (v *Vantage6) Close() error { return os.RemoveAll(v.dir) }

// notAnInput refuses the output file out when it is one of the files
// inputs, which the variable what names.
func notAnInput(out, what string, inputs []string) error {
	o, err := os.Stat(out)
	if err != nil || !o.Mode().IsRegular() {
		return nil
	}
	for _, in := range inputs {
		fi, err := os.Stat(in)
		if err == nil && fi.Mode().IsRegular() && os.SameFile(o, fi) {
			return envErrorf("OUTPUT_FILE %s is also an input (%s %s): inputs are never modified; write the output to a new file", out, what, in)
		}
	}
	return nil
}

// nodeDisclosure reads the node-level thresholds GRMDP_MIN_COUNT and
// GRMDP_MIN_ROWS.
func nodeDisclosure(env func(string) string) (solve.Disclosure, error) {
	dc := solve.Disclosure{MinCount: federate.DefaultMinCount, MinRows: federate.DefaultMinRows}
	for _, x := range []struct {
		name string
		v    *int
	}{{"GRMDP_MIN_COUNT", &dc.MinCount}, {"GRMDP_MIN_ROWS", &dc.MinRows}} {
		if s := env(x.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return dc, envErrorf("%s=%q: want a nonnegative integer", x.name, s)
			}
			*x.v = n
		}
	}
	return dc, nil
}
