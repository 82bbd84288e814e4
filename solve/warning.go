package solve

// Warning is one finding of [Diagnostics] that does not stop the run: what
// is wrong, and the setting that would address it. [Warning.String] says
// both in the library's terms; a front end that spells its settings its
// own way (a command line's flags) joins Finding with its own words for
// Hint.
type Warning struct {
	// Finding says what is wrong and what it does to the solution, ending
	// where the advice begins.
	Finding string
	// Hint is the advice's subject; NoHint when there is none.
	Hint Hint
}

// Hint names the advice a [Warning] ends with.
type Hint int

const (
	// NoHint: the finding stands alone.
	NoHint Hint = iota
	// HintCluster: pool the site with similar sites (the [Cluster]
	// method) or coarsen the features.
	HintCluster
	// HintCheckPenalty: check the penalty constant c (or solve along a
	// path of c) and the data's coverage.
	HintCheckPenalty
	// HintSmallerPenalty: a smaller penalty constant c.
	HintSmallerPenalty
	// HintLargerLambda: a larger ridge parameter lambda, or fewer
	// collinear features.
	HintLargerLambda
)

// Advice returns the hint's advice in the library's terms.
func (h Hint) Advice() string {
	switch h {
	case HintCluster:
		return "cluster it with similar sites (the cluster method) or coarsen the features"
	case HintCheckPenalty:
		return "Check the penalty constant c and the coverage"
	case HintSmallerPenalty:
		return "try a smaller penalty constant c"
	case HintLargerLambda:
		return "use a larger ridge parameter lambda or drop collinear features"
	}
	return ""
}

// String returns the warning as one line: the finding and the hint's
// [Hint.Advice].
func (w Warning) String() string { return w.Finding + w.Hint.Advice() }
