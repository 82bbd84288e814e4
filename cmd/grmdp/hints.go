package main

import (
	"cmp"

	"github.com/grmdp/grmdp/solve"
)

// hintFlags is each solve hint's advice in terms of the flags that act on
// it.
var hintFlags = map[solve.Hint]string{
	solve.HintCluster:        "cluster it with similar sites (--method cluster) or coarsen the features",
	solve.HintCheckPenalty:   "Check the penalty (--c auto chooses c held out; --c-path) and the coverage",
	solve.HintSmallerPenalty: "try --c auto (c chosen held out) or a smaller --c (see --c-path)",
	solve.HintLargerLambda:   "use a larger --lambda or drop collinear features",
}

// solveWarnings returns dg's warnings, one line each, their advice naming
// the command's flags.
func solveWarnings(dg *solve.Diagnostics) []string {
	var out []string
	for _, w := range dg.Findings() {
		out = append(out, w.Finding+cmp.Or(hintFlags[w.Hint], w.Hint.Advice()))
	}
	return out
}
