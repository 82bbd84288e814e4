package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/io/policyio"
	"github.com/grmdp/grmdp/solve"
)

// The files the coordinator writes are package federate's: the job's
// state, JOB/policy.parquet, JOB/solve.json and JOB/eval.

// ErrNoMessages is a round stepped without a message.
var ErrNoMessages = errors.New("dataset: no message given: name one message file per site")

// ErrEvalOpen is an evaluation opened on a job whose evaluation is still
// open.
var ErrEvalOpen = errors.New("dataset: an evaluation is open")

// CoordinatorOptions say how a federated job's results are worded.
type CoordinatorOptions struct {
	// Version is the program's version, recorded in the job's policy.
	Version string
	// Warn words the policy's diagnostics as warnings (nil:
	// [solve.Diagnostics.Warnings]).
	Warn func(*solve.Diagnostics) []string
	// CensoredBy names, in an evaluation's text, what cut the censored
	// episodes ([eval.Result].CensoredBy).
	CensoredBy string
}

// JobStep is what [StepJob] did to a job.
type JobStep struct {
	// Job is the job after the step: a shape round sets its sizes.
	Job *federate.Job
	// Messages and Bytes count the messages folded and their bytes.
	Messages int
	Bytes    int64
	// Resumed says that the job's last round had been folded by a step
	// stopped before it wrote the policy: the step wrote it from the job's
	// state and read no message.
	Resumed bool
	// Policy and Report are the finished job's policy and summary, written
	// to JOB/policy.parquet and JOB/solve.json (nil before the last round).
	Policy *solve.Policy
	Report *SolveReport
	// Evaluation is the result of the evaluation the step finished,
	// written to JOB/eval (nil otherwise).
	Evaluation *eval.Result

	dir        string
	before     *federate.Job
	state      *federate.State     // the state the step folded into
	next       *federate.State     // the state after the step
	eval       *federate.EvalState // the evaluation round folded (nil for a round of the job)
	evalText   string
	shapeRound bool
}

// StepJob folds the messages at msgs, one per site, into the job in the
// directory dir, under the job's step lock ([federate.BeginStep]): a
// shape round, a round of the job's steps or its value round, or a round
// of the evaluation open on a finished job. After the job's last round it
// writes the policy and its summary, after an evaluation's last round the
// evaluation's result. A job whose last round was folded by a step that
// stopped before writing the policy gets it from its state, whatever msgs
// are. Without msgs it returns [ErrNoMessages]; a refusal of what is
// folded wraps [federate.ErrRefused].
func StepJob(ctx context.Context, dir string, msgs []string, o CoordinatorOptions) (*JobStep, error) {
	j, s, unlock, err := federate.BeginStep(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st := &JobStep{Job: j, dir: dir, before: j, state: s, next: s}
	if federate.OutputsMissing(dir, j, s) {
		st.Resumed = true
		return st, st.writeOutputs(o)
	}
	if len(msgs) == 0 {
		return nil, ErrNoMessages
	}
	in, bytes, err := ReadMessages(msgs)
	if err != nil {
		return nil, err
	}
	st.Messages, st.Bytes = len(in), bytes
	if s.Done(j) {
		return st, st.foldEval(ctx, in, o)
	}
	st.shapeRound = j.ShapeOpen()
	if st.Job, st.next, err = federate.Advance(ctx, dir, j, s, in); err != nil {
		return nil, err
	}
	if !st.shapeRound && st.next.Done(j) {
		return st, st.writeOutputs(o)
	}
	return st, nil
}

// writeOutputs writes the finished job's solve.json and policy from its
// final state.
func (st *JobStep) writeOutputs(o CoordinatorOptions) error {
	p, diag, err := federate.FinalPolicy(st.Job, st.next, o.Version, o.Warn)
	if err != nil {
		return err
	}
	out := filepath.Join(st.dir, federate.PolicyFile)
	f, err := fileio.CreateAtomic(filepath.Join(st.dir, federate.SolveFile))
	if err != nil {
		return err
	}
	defer f.Abort()
	rep := NewSolveReport(p, diag, out, nil)
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if err := WritePolicy(out, p); err != nil {
		return err
	}
	st.Policy, st.Report = p, rep
	return nil
}

// foldEval folds a round of the finished job's open evaluation; after
// the last it writes the evaluation's result.
func (st *JobStep) foldEval(ctx context.Context, in []federate.Incoming, o CoordinatorOptions) error {
	j := st.Job
	e, err := federate.LoadEval(st.dir, j)
	if err != nil {
		return err
	}
	if e == nil {
		return fmt.Errorf("%w: job %s is finished (all %d rounds folded) and no evaluation is open", federate.ErrRefused, j.ID, j.Rounds())
	}
	st.eval = e
	next, res, err := federate.FoldEval(ctx, j, st.state, e, in)
	if err != nil {
		return err
	}
	if res == nil {
		return federate.SaveEval(st.dir, next)
	}
	doc := res.Result(j, next)
	var text strings.Builder
	doc.CensoredBy = o.CensoredBy
	doc.WriteText(&text)
	if err := federate.WriteEvalResult(st.dir, next, doc, text.String()); err != nil {
		return err
	}
	st.Evaluation, st.evalText = doc, text.String()
	return nil
}

// WritePolicy writes p to path (atomically: the file appears only when
// complete). A penalty that is not finite, which no policy file holds, is
// a [*PenaltyError].
func WritePolicy(path string, p *solve.Policy) error {
	betas := []float64{p.Beta}
	for _, r := range p.Runs {
		betas = append(betas, r.Beta)
	}
	for _, b := range betas {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return &PenaltyError{Beta: b, C: p.C, Xi: p.Xi}
		}
	}
	return policyio.Write(path, p)
}

// PenaltyError is a penalty beta = c d H sqrt(zeta) that is not finite
// (zeta's logarithm of 2 d G H N / xi overflows for a tiny xi).
type PenaltyError struct{ Beta, C, Xi float64 }

func (e *PenaltyError) Error() string {
	return fmt.Sprintf("dataset: the penalty beta = c d H sqrt(log(2 d G H N / xi)) is %v with c %g and xi %g: use a larger xi or a smaller c, or give beta", e.Beta, e.C, e.Xi)
}

// JobEvaluation is the evaluation of a policy on a finished federated
// job: open, or finished with its result.
type JobEvaluation struct {
	Job *federate.Job
	// State is the evaluation's state (nil: the job has no evaluation).
	State *federate.EvalState
	// Policy names the policy file evaluated, as given to
	// [OpenEvaluation] ("": the name the evaluation records).
	Policy string
	// Warnings are the cluster file's, when the evaluation was opened
	// with one.
	Warnings []string
	// Text and JSON are the finished evaluation's result as written to
	// JOB/eval (nil: not finished).
	Text, JSON []byte

	opened bool
}

// EvalClusters is a cluster file, cut as Options says, whose missing sites
// AllowSingletons keeps as clusters of their own ([ClusterProblem]). In an
// evaluation it groups Delta_h; no Path: the policy's own groups when it
// pools sites.
type EvalClusters struct {
	Path            string
	Options         cluster.Options
	AllowSingletons bool
}

// OpenEvaluation opens the evaluation of the policy file at policy on
// the finished job in the directory dir: it copies the file into
// JOB/eval and writes the evaluation's state before its first round,
// whose messages the sites then compute ([SiteMessage]). An evaluation
// still open is an error wrapping [ErrEvalOpen].
func OpenEvaluation(dir, policy string, c EvalClusters) (*JobEvaluation, error) {
	j, s, err := federate.Load(dir)
	if err != nil {
		return nil, err
	}
	if e, err := federate.LoadEval(dir, j); err != nil {
		return nil, err
	} else if e != nil && !e.Done(j) {
		return nil, fmt.Errorf("%w: job %s already has an evaluation open (of %s, at round %d of %d): finish it first", ErrEvalOpen, j.ID, e.Policy, e.Round+1, e.Rounds(j))
	}
	b, err := os.ReadFile(policy)
	if err != nil {
		return nil, err
	}
	p, err := policyio.Read(policy)
	if err != nil {
		return nil, err
	}
	ev := &JobEvaluation{Job: j, Policy: policy, opened: true}
	var clusters []federate.Cluster
	if c.Path != "" {
		prob, warns, err := ClusterProblem(c.Path, c.Options, c.AllowSingletons, s.Order)
		if err != nil {
			return nil, err
		}
		ev.Warnings = warns
		clusters = federate.NamedClusters(prob.Groups, prob.GroupNames, s.Order)
	}
	sum := sha256.Sum256(b)
	if ev.State, err = federate.NewEval(j, s, p, filepath.Base(policy), hex.EncodeToString(sum[:]), clusters); err != nil {
		return nil, err
	}
	return ev, federate.WriteEval(dir, ev.State, b)
}

// ReadEvaluation reads the evaluation of the job in the directory dir,
// with its result when it is finished; its State is nil when the job has
// none.
func ReadEvaluation(dir string) (*JobEvaluation, error) {
	j, _, err := federate.Load(dir)
	if err != nil {
		return nil, err
	}
	e, err := federate.LoadEval(dir, j)
	if err != nil {
		return nil, err
	}
	ev := &JobEvaluation{Job: j, State: e}
	if e == nil || !e.Done(j) {
		return ev, nil
	}
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{{federate.EvalTextFile, &ev.Text}, {federate.EvalResultFile, &ev.JSON}} {
		if *f.dst, err = os.ReadFile(filepath.Join(dir, federate.EvalDir, f.name)); err != nil {
			return nil, badInputf("evaluation of job %s: %w", j.ID, err)
		}
	}
	return ev, nil
}

// WriteText says what the step did: the round folded, with its messages'
// count and bytes, and the next round; after the job's last round the
// files written and the solve's summary, after an evaluation's last round
// the evaluation's text.
func (st *JobStep) WriteText(w io.Writer) error {
	j, s := st.before, st.state
	switch {
	case st.Resumed:
		fmt.Fprintf(w, "the job's last round was folded by a step stopped before it wrote the policy: writing it from the job's state (the messages given are not read)\n")
		return st.writeSolved(w)
	case st.eval != nil:
		e := st.eval
		if st.Evaluation == nil {
			_, err := fmt.Fprintf(w, "evaluation round %d of %d folded (step %d, %d sites, %d bytes)\n", e.Round+1, e.Rounds(j), j.StepOf(e.Round), st.Messages, st.Bytes)
			return err
		}
		fmt.Fprintf(w, "evaluation round %d of %d folded (%d sites, %d bytes): evaluation done, wrote %s\n\n", e.Rounds(j), e.Rounds(j), st.Messages, st.Bytes,
			filepath.Join(st.dir, federate.EvalDir, federate.EvalResultFile))
		_, err := io.WriteString(w, st.evalText)
		return err
	case st.shapeRound:
		nj := st.Job
		fmt.Fprintf(w, "shape round folded (%d sites, %d bytes): H = %d, A = %d", st.Messages, st.Bytes, nj.H, nj.Map.A)
		if nj.Map.Kind == features.Tabular {
			fmt.Fprintf(w, ", S = %d", nj.Map.S)
		}
		_, err := fmt.Fprintf(w, "; %d rounds follow (%d steps, then the value round); next round: step %d\n", nj.Rounds(), nj.H, nj.H)
		return err
	case st.Policy != nil:
		fmt.Fprintf(w, "round %d of %d folded (the value round, %d sites, %d bytes): job done\n", j.Rounds(), j.Rounds(), st.Messages, st.Bytes)
		return st.writeSolved(w)
	}
	h := j.StepOf(s.Round)
	next := fmt.Sprintf("step %d", h-1)
	if j.ValueRound(st.next.Round) {
		next = "the value round"
	}
	_, err := fmt.Fprintf(w, "round %d of %d folded (step %d, %d sites, %d bytes); next round: %s\n", s.Round+1, j.Rounds(), h, st.Messages, st.Bytes, next)
	return err
}

// writeSolved names the finished job's files and prints its summary.
func (st *JobStep) writeSolved(w io.Writer) error {
	fmt.Fprintf(w, "wrote %s and %s\n", st.Report.Policy, filepath.Join(st.dir, federate.SolveFile))
	return st.Report.WriteText(w)
}

// WriteText prints the evaluation: when just opened, its rounds and
// passes; when open, its round; when finished, its result's text.
func (ev *JobEvaluation) WriteText(w io.Writer) error {
	j, e := ev.Job, ev.State
	switch {
	case e == nil:
		_, err := fmt.Fprintf(w, "job %s has no evaluation\n", j.ID)
		return err
	case ev.opened:
		var passes []string
		for _, ps := range e.Passes {
			passes = append(passes, ps.Name)
		}
		bounds := ""
		if e.Bounds {
			bounds = "; identification bounds"
		}
		_, err := fmt.Fprintf(w, "evaluation of %s opened on job %s: %d rounds (passes %s%s)\n", ev.Policy, j.ID, e.Rounds(j), strings.Join(passes, ", "), bounds)
		return err
	case !e.Done(j):
		_, err := fmt.Fprintf(w, "evaluation of %s on job %s: at round %d of %d\n", e.Policy, j.ID, e.Round+1, e.Rounds(j))
		return err
	}
	_, err := w.Write(ev.Text)
	return err
}
