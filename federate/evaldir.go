package federate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/grmdp/grmdp/solve"
)

// The evaluation's files in the job directory: EvalDir holds the policy
// file it evaluates (EvalPolicyFile, a byte copy), its state
// (EvalStateFile) and, once finished, its result (EvalResultFile).

// WriteEval opens the evaluation e in the job directory dir: it copies
// policy, the bytes of the policy file e evaluates, to
// JOB/eval/policy.parquet, removes an earlier evaluation's result and
// writes e's state.
func WriteEval(dir string, e *EvalState, policy []byte) error {
	if err := os.MkdirAll(filepath.Join(dir, EvalDir), 0o755); err != nil {
		return err
	}
	for _, old := range []string{EvalResultFile, EvalTextFile} {
		if err := os.Remove(filepath.Join(dir, EvalDir, old)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if err := writeAtomic(filepath.Join(dir, EvalDir, EvalPolicyFile), policy); err != nil {
		return err
	}
	return SaveEval(dir, e)
}

// EvalPolicyPath returns the path of the policy file of the evaluation e
// open in the job directory dir, after checking that its bytes are those
// e was opened with.
func EvalPolicyPath(dir string, e *EvalState) (string, error) {
	path := filepath.Join(dir, EvalDir, EvalPolicyFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != e.PolicySHA256 {
		return "", fmt.Errorf("%s: its SHA-256 is not the one the evaluation was opened with (%s): the policy changed", path, e.PolicySHA256[:16])
	}
	return path, nil
}

// writeEvalInput writes an evaluation round's state (the JSON of an
// [EvalState]) and the bytes of its policy file, as a site receives them,
// into the job directory dir.
func writeEvalInput(dir string, state, policy []byte) error {
	if err := os.MkdirAll(filepath.Join(dir, EvalDir), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, EvalDir, EvalStateFile), state, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, EvalDir, EvalPolicyFile), policy, 0o644)
}

// WriteEvalResult writes a finished evaluation's result document doc
// (indented JSON) to JOB/eval/eval.json, its printed form text to
// JOB/eval/eval.txt, and then its state e.
func WriteEvalResult(dir string, e *EvalState, doc any, text string) error {
	if err := writeJSON(filepath.Join(dir, EvalDir, EvalResultFile), doc); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, EvalDir, EvalTextFile), []byte(text)); err != nil {
		return err
	}
	return SaveEval(dir, e)
}

// FinalPolicy returns the finished job's policy, as [Policy] does, with
// its provenance (version, the job's settings and, as setting
// federated_job, its ID), its diagnostics and, as warnings, the notes of
// [Diagnose] followed by the diagnostics' warnings, worded by warn (nil:
// [solve.Diagnostics.Warnings]).
func FinalPolicy(j *Job, s *State, version string, warn func(*solve.Diagnostics) []string) (*solve.Policy, *solve.Diagnostics, error) {
	if warn == nil {
		warn = (*solve.Diagnostics).Warnings
	}
	p, err := Policy(j, s)
	if err != nil {
		return nil, nil, err
	}
	p.Version = version
	p.Settings = j.recordedSettings()
	_, diag, notes := Diagnose(j, s, p)
	p.Warnings = append(notes, warn(diag)...)
	return p, diag, nil
}

// recordedSettings are the settings a job's results record: the job's,
// and its ID as setting federated_job.
func (j *Job) recordedSettings() map[string]string {
	s := make(map[string]string, len(j.Settings)+1)
	for k, v := range j.Settings {
		s[k] = v
	}
	s["federated_job"] = j.ID
	return s
}
