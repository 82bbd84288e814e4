package federate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Task is the input of a vantage6 task, which a coordinator sends to
// every node: the job and its current state (the files [Create] and
// [Advance] keep), the site the node's organisation plays, and
// optionally stricter thresholds.
type Task struct {
	Method string          `json:"method"`
	Job    json.RawMessage `json:"job"`
	State  json.RawMessage `json:"state"`
	Site   string          `json:"site"`
	// Database is the label of the node's database to read (vantage6 4:
	// <LABEL>_DATABASE_URI); empty reads DATABASE_URI.
	Database string `json:"database"`
	MinCount int    `json:"min_count"`
	MinRows  int    `json:"min_rows"`
	// Eval and Policy carry an evaluation round: the evaluation's state
	// (JOB/eval/state.json) and the policy's bytes (base64).
	Eval   json.RawMessage `json:"eval,omitempty"`
	Policy []byte          `json:"policy,omitempty"`
}

// ErrBadTask marks a task input a site cannot run: not JSON, another
// method than the site part, or without what the round needs.
var ErrBadTask = errors.New("federate: bad task input")

type taskError struct{ msg string }

func (e *taskError) Error() string { return e.msg }
func (e *taskError) Unwrap() error { return ErrBadTask }

// ParseTask reads a task's input (JSON) and checks that it asks for the
// site part ("site") with a job, its state and the site.
func ParseTask(b []byte) (*Task, error) {
	var t Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, &taskError{fmt.Sprintf("not the JSON input of a grmdp task: %v", err)}
	}
	if t.Method != "site" {
		return nil, &taskError{fmt.Sprintf("method %q: grmdp vantage6 runs the site part (\"site\")", t.Method)}
	}
	if len(t.Job) == 0 || len(t.State) == 0 || t.Site == "" {
		return nil, &taskError{"the input needs the job, its state and the site"}
	}
	return &t, nil
}

// Unpack writes the task's job and state and, for an evaluation round,
// the evaluation's state and policy into the job
// directory dir, where a site reads them as it reads a coordinator's.
func (t *Task) Unpack(dir string) error {
	for _, f := range []struct {
		name string
		b    []byte
	}{{JobFile, t.Job}, {StateFile, t.State}} {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.b, 0o644); err != nil {
			return err
		}
	}
	if len(t.Eval) == 0 {
		return nil
	}
	if len(t.Policy) == 0 {
		return &taskError{"an evaluation round's input needs the policy's bytes (\"policy\", base64)"}
	}
	return writeEvalInput(dir, t.Eval, t.Policy)
}
