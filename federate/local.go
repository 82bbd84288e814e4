package federate

import (
	"bytes"
	"cmp"
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
)

// Local plays a whole job on one machine, every part a separate process
// of the grmdp program Exe that exchanges only the job's files and the
// messages: `grmdp federate site` at each site, on its own data, and
// `grmdp federate step` for the coordinator.
type Local struct {
	// Exe is the grmdp program; Dir the job directory; Messages the
	// directory of the messages.
	Exe, Dir, Messages string
	// Data is each site's data argument, by site name.
	Data map[string]string
	// Workers, when above 0, is every site's --workers.
	Workers int
	// Cache keeps each site's rows between the job's rounds in a
	// temporary directory of its own (federate site --cache), removed when
	// Run returns. An evaluation's rounds read every step, so they do not
	// use it.
	Cache bool
	// EvalPolicy, if not "", is a policy whose evaluation `grmdp federate
	// eval` opens once the job is done (with the cluster file
	// EvalClusters, if not ""); its rounds are then played too.
	EvalPolicy, EvalClusters string
	// Stdout receives every part's stdout, Stderr their notes; nil
	// drops them.
	Stdout, Stderr io.Writer

	cache string
}

// PartError is a part that failed: its exit code and the last line of its
// stderr (without the program's name).
type PartError struct {
	Code int
	Msg  string
}

func (e *PartError) Error() string { return e.Msg }

// DataError is a [Local] whose Data do not name the job's sites one for
// one: Site is a site of Data the job does not have (Unknown), or a site
// of the job without data.
type DataError struct {
	Site    string
	Unknown bool
	// Sites are the job's sites.
	Sites []string
}

func (e *DataError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("federate: data of site %q, which is not one of the job's sites %q", e.Site, e.Sites)
	}
	return fmt.Sprintf("federate: no data for the job's site %q", e.Site)
}

// Run plays the job's rounds and, with Eval, its evaluation's. Data that
// do not name the job's sites one for one are a [*DataError]; a part that
// fails ends the run with a [*PartError], and a part interrupted with
// ctx.Err().
func (l *Local) Run(ctx context.Context) error {
	j, _, err := Load(l.Dir)
	if err != nil {
		return err
	}
	var unknown []string
	for site := range l.Data {
		if !slices.Contains(j.Sites, site) {
			unknown = append(unknown, site)
		}
	}
	if len(unknown) > 0 {
		return &DataError{Site: slices.Min(unknown), Unknown: true, Sites: j.Sites}
	}
	for _, site := range j.Sites {
		if _, ok := l.Data[site]; !ok {
			return &DataError{Site: site, Sites: j.Sites}
		}
	}
	if l.Cache {
		root, err := os.MkdirTemp("", "grmdp-site-cache-")
		if err != nil {
			return fmt.Errorf("federate run: a temporary directory for the site caches: %w", err)
		}
		defer os.RemoveAll(root)
		l.cache = root
	}
	if err := Play(ctx, l.Dir, l.Messages, l); err != nil || l.EvalPolicy == "" {
		return err
	}
	args := []string{"federate", "eval", "--job", l.Dir, "--policy", l.EvalPolicy}
	if l.EvalClusters != "" {
		args = append(args, "--clusters", l.EvalClusters)
	}
	if err := l.part(ctx, args); err != nil {
		return fmt.Errorf("coordinator, opening the evaluation: %w", err)
	}
	l.cache = ""
	return PlayEval(ctx, l.Dir, l.Messages, l)
}

// Site runs grmdp federate site for site i of job j.
func (l *Local) Site(ctx context.Context, j *Job, i int, out string) error {
	site := j.Sites[i]
	args := []string{"federate", "site", "--job", l.Dir, "--site", site, "-o", out,
		"--min-count", strconv.Itoa(j.Disclosure.MinCount), "--min-rows", strconv.Itoa(j.Disclosure.MinRows)}
	if l.Workers > 0 {
		args = append(args, "--workers", strconv.Itoa(l.Workers))
	}
	if l.cache != "" {
		args = append(args, "--cache", filepath.Join(l.cache, fmt.Sprintf("site-%03d", i)))
	}
	return l.part(ctx, append(args, l.Data[site]))
}

// Step runs grmdp federate step on the round's messages.
func (l *Local) Step(ctx context.Context, _ *Job, msgs []string) error {
	return l.part(ctx, append([]string{"federate", "step", "--job", l.Dir}, msgs...))
}

// part runs one part of the job as a separate process; its stderr but the
// last line goes to l.Stderr, and a failure's last line is the error.
func (l *Local) part(ctx context.Context, args []string) error {
	cmd := exec.CommandContext(ctx, l.Exe, args...)
	var errBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = l.Stdout, &errBuf
	err := cmd.Run()
	notes := l.Stderr
	if notes == nil {
		notes = io.Discard
	}
	if err == nil {
		notes.Write(errBuf.Bytes())
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	msg := strings.TrimSpace(errBuf.String())
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		notes.Write([]byte(msg[:i+1]))
		msg = msg[i+1:]
	}
	msg = strings.TrimPrefix(msg, "grmdp: ")
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &PartError{Code: ee.ExitCode(), Msg: cmp.Or(msg, err.Error())}
	}
	if msg == "" {
		return err
	}
	return errors.New(msg)
}
