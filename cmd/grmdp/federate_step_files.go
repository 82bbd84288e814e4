package main

import (
	"os"
	"path/filepath"

	"github.com/grmdp/grmdp/federate"
)

// stepFiles are the files a federate step writes, by folder of the job:
// the job's state and, after the last round, its policy and solve.json;
// an evaluation's state and result.
var stepFiles = map[string][]string{
	"":               {federate.StateFile, federate.PolicyFile, SolveJSONFile},
	federate.EvalDir: {federate.EvalStateFile, federate.EvalResultFile},
}

// removeStaleTemps removes the temporary files a step stopped by SIGKILL
// left beside the files steps write (fileio's .NAME.tmp-*). Steps hold the
// job's lock, so no other step is writing them.
func removeStaleTemps(dir string) {
	for sub, names := range stepFiles {
		for _, name := range names {
			m, _ := filepath.Glob(filepath.Join(dir, sub, "."+name+".tmp-*"))
			for _, p := range m {
				os.Remove(p)
			}
		}
	}
}

// finishedWithoutOutputs reports whether the job in dir is done by its
// state while its policy was never written: a step stopped after saving
// the final state (finishJob saves it first). The state holds the result,
// so the policy is written from it.
func finishedWithoutOutputs(dir string, j *federate.Job, s *federate.State) bool {
	if !s.Done(j) {
		return false
	}
	for _, p := range []string{filepath.Join(dir, federate.PolicyFile), filepath.Join(dir, federate.EvalDir)} {
		if _, err := os.Lstat(p); err == nil {
			return false
		}
	}
	return true
}
