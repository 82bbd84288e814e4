package federate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/grmdp/grmdp/internal/textfmt"
)

// WriteText writes what the message discloses, in words, for the data
// steward who releases it; name is the message's file as the steward
// knows it.
func (in Incoming) WriteText(w io.Writer, name string) error {
	ew := &textfmt.ErrWriter{W: w}
	m := in.Msg
	if m.Kind == KindShape {
		writeShapeText(ew, name, in)
	} else {
		writeSumsText(ew, name, in)
	}
	return ew.Err
}

// writeSumsText writes what a message of sums discloses.
func writeSumsText(w io.Writer, name string, in Incoming) {
	m := in.Msg
	dc := m.Disclosure
	what := fmt.Sprintf("round %d (step %d)", m.Round+1, m.Step)
	switch {
	case m.Kind == KindEval && m.Step > 0:
		what = fmt.Sprintf("evaluation round %d (step %d)", m.Round+1, m.Step)
	case m.Kind == KindEval:
		what = fmt.Sprintf("evaluation round %d (the last: values at the initial states)", m.Round+1)
	case m.Kind != "":
		what = "the value round (after the last step)"
	}
	fmt.Fprintf(w, "%s is site %s's message for %s of federated job %s.\n", name, textfmt.Quote(m.Site), what, m.JobID)
	fmt.Fprintf(w, "It holds sums over the site's rows and no row of data. Its checksum is verified (%s).\n\n", m.Checksum[:16])
	if m.Kind != "" {
		fmt.Fprintf(w, "Disclosure control: a count below %d is withheld and shown as \"fewer than %d\"; a sum over the site's patients is sent only from at least %d rows.\n\n",
			dc.MinCount, dc.MinCount, max(dc.MinRows, dc.MinCount))
	} else {
		fmt.Fprintf(w, "Disclosure control: a count below %d is withheld, with the counts beside it that would give it away; with fewer than %d rows at the step the site sends nothing for it.\n\n", dc.MinCount, max(dc.MinRows, dc.MinCount))
	}
	fmt.Fprintf(w, "Totals: %d trajectories (patients' episodes) and %d rows over every step.\n", m.Trajectories, m.Rows)
	if m.Kind != "" {
		// A value or evaluation round's message lists its contents.
		fmt.Fprintf(w, "\nWhat is sent:\n")
		for _, x := range m.contents() {
			fmt.Fprintf(w, "  - %s\n", x)
		}
		writeSources(w, in)
		return
	}
	if m.Silent {
		fmt.Fprintf(w, "Step %d: fewer than %d rows: nothing about this step is sent (all sums are zero).\n", m.Step, max(dc.MinRows, dc.MinCount))
	} else {
		fmt.Fprintf(w, "Step %d: %.0f rows.\n", m.Step, m.StepRows)
	}
	fmt.Fprintf(w, "\nWhat is sent:\n")
	if len(m.GramRows) > 0 {
		fmt.Fprintf(w, "  - %d sums of products of features over the rows of each of the %d steps (the Gram matrices, %d features; a stationary job pools every step,\n"+
			"    and each step's sums are withheld by that step's counts, shown in the message of that step's round)\n", len(m.Gram), len(m.GramRows), len(m.Counts))
	} else {
		fmt.Fprintf(w, "  - %d sums of products of features over the step's rows (the Gram matrix, %d features)\n", len(m.Gram), len(m.Counts))
	}
	if m.Blocks != nil {
		fmt.Fprintf(w, "  - the site's blocks of the precomputed map: which features its rows link together (a partition of the features, not under --min-count)\n")
	}
	runs := "the job's regression"
	if len(m.RHS) != 1 {
		runs = fmt.Sprintf("each of the %d regressions this site takes part in", len(m.RHS))
	}
	fmt.Fprintf(w, "  - %d weighted sums of reward plus estimated future value, one per feature, for %s\n", len(m.Counts), runs)
	fmt.Fprintf(w, "  - %d counts of actions taken (by state where states are categories), for the fallback rule\n", len(m.Behaviour))
	fmt.Fprintf(w, "  - the number of rows behind each feature:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	shown := 0
	for i, c := range m.Counts {
		if shown == 60 {
			fmt.Fprintf(tw, "      ...\t%d more features\n", len(m.Counts)-shown)
			break
		}
		v := fmt.Sprintf("%.0f rows", c)
		if c == 0 && dc.MinCount > 0 {
			v = "none sent"
		}
		fmt.Fprintf(tw, "      %s\t%s\n", featureName(&m.Map, i), v)
		shown++
	}
	tw.Flush()
	if m.Suppressed > 0 {
		fmt.Fprintf(w, "  %d observed features were withheld (counted at fewer than %d rows, or beside such a count): their sums are zero.\n", m.Suppressed, dc.MinCount)
	}
	writeSources(w, in)
}

// writeShapeText writes what a shape message discloses.
func writeShapeText(w io.Writer, name string, in Incoming) {
	m := in.Msg
	fmt.Fprintf(w, "%s is site %s's message for the shape round of federated job %s.\n", name, m.Site, m.JobID)
	fmt.Fprintf(w, "It holds no row of data, no count and no label. Its checksum is verified (%s).\n\n", m.Checksum[:16])
	fmt.Fprintf(w, "What is sent: the site's largest values, after the job's rules (first step, NULLs):\n")
	sz := m.Shape
	if sz.H > 0 {
		fmt.Fprintf(w, "  - the largest step: H = %d\n", sz.H)
	}
	if sz.A > 0 {
		fmt.Fprintf(w, "  - the largest action + 1: A = %d\n", sz.A)
	}
	if sz.S > 0 {
		fmt.Fprintf(w, "  - the largest state + 1: S = %d\n", sz.S)
	}
	fmt.Fprintf(w, "Each says that some row of the site's data has that value; the job fixes every other size.\n")
	writeSources(w, in)
}

// writeSources writes the data files a message was computed from (with
// their rows, but for a shape round's) and the message file's size and
// checksum.
func writeSources(w io.Writer, in Incoming) {
	fmt.Fprintf(w, "\nData files it was computed from:\n")
	for _, s := range in.Msg.Sources {
		rows := ""
		if in.Msg.Kind != KindShape {
			rows = fmt.Sprintf("%d rows, ", s.Rows)
		}
		fmt.Fprintf(w, "  %s (%d bytes, %sfingerprint %s)\n", s.Path, s.Size, rows, s.Fingerprint[:min(16, len(s.Fingerprint))])
	}
	fmt.Fprintf(w, "Message file: %d bytes, SHA-256 %s\n", in.Bytes, in.SHA256)
}

// RoundName names the message's round of job j in words, as in "round 3
// of 21 (step 18)".
func (m *Message) RoundName(j *Job) string {
	switch {
	case m.Kind == KindShape:
		return "the shape round"
	case m.Kind == KindEval:
		return fmt.Sprintf("evaluation round %d of %d", m.Round+1, j.H+1)
	case m.Kind == KindValue:
		return fmt.Sprintf("round %d of %d (the value round)", m.Round+1, j.Rounds())
	}
	return fmt.Sprintf("round %d of %d (step %d)", m.Round+1, j.Rounds(), m.Step)
}

// WriteReceipt writes what a site sends in the message of job j it wrote
// to file (size bytes): its round, the kind of aggregate and what was
// withheld.
func (m *Message) WriteReceipt(w io.Writer, j *Job, file string, size int64) error {
	release := "sums only"
	if m.Kind == KindShape {
		release = "largest values only"
	}
	ew := &textfmt.ErrWriter{W: w}
	fmt.Fprintf(ew, "site %s, %s: wrote %s (%d bytes): %s, no row\n", textfmt.Quote(m.Site), m.RoundName(j), file, size, release)
	switch {
	case m.Shape != nil:
		fmt.Fprintf(ew, "  %s\n", shapeWords(j, m.Shape))
	case m.Silent:
		fmt.Fprintf(ew, "  fewer than %d rows at step %d: the site contributes nothing to this step\n", m.Disclosure.MinRows, m.Step)
	case m.Suppressed > 0:
		fmt.Fprintf(ew, "  %d features withheld (counted at fewer than %d rows, or withheld beside such a count)\n", m.Suppressed, m.Disclosure.MinCount)
	}
	return ew.Err
}

// shapeWords says a shape message's sizes in words.
func shapeWords(j *Job, sz *Sizes) string {
	var w []string
	if j.Asks(AskH) {
		w = append(w, fmt.Sprintf("largest step H = %d", sz.H))
	}
	if j.Asks(AskA) {
		w = append(w, fmt.Sprintf("A = %d actions (largest action + 1)", sz.A))
	}
	if j.Asks(AskS) {
		w = append(w, fmt.Sprintf("S = %d states (largest state + 1)", sz.S))
	}
	return strings.Join(w, ", ")
}

// WriteSummary writes what job j, made in the directory dir, is: its
// method, map, rounds, sites and thresholds, and the rules every site
// reads its rows under.
func (j *Job) WriteSummary(w io.Writer, dir string) error {
	ew := &textfmt.ErrWriter{W: w}
	dc, sites := j.Disclosure, strings.Join(textfmt.QuoteAll(j.Sites), ", ")
	if j.ShapeOpen() {
		fmt.Fprintf(ew, "job %s in %s: %s, %s map, sites %s; min count %d, min rows %d\n", j.ID, dir, j.Method, j.Map.Kind, sites, dc.MinCount, dc.MinRows)
		fmt.Fprintf(ew, "first the shape round: each site sends its largest %s, and step sets the job's sizes to the largest over the sites\n", askWords(j.Ask))
	} else {
		fmt.Fprintf(ew, "job %s in %s: %s, %s map (d = %d), %d rounds (%d steps, then the value round), sites %s; min count %d, min rows %d\n",
			j.ID, dir, j.Method, j.Map.Kind, j.Map.Dim(), j.Rounds(), j.H, sites, dc.MinCount, dc.MinRows)
	}
	fmt.Fprintf(ew, "every site reads its rows under the job's rules: %s\n", j.Rules.words())
	return ew.Err
}

// askWords names the sizes of a shape round in words.
func askWords(ask []string) string {
	words := map[string]string{AskH: "step (H)", AskA: "action + 1 (A)", AskS: "state + 1 (S)"}
	var w []string
	for _, x := range ask {
		w = append(w, words[x])
	}
	return strings.Join(w, ", ")
}

// words says the rules in words.
func (r Rules) words() string {
	fs := map[string]string{"": "steps numbered from 1", "1": "steps numbered from 1", "0": "steps numbered from 0",
		"detect": "steps numbered from 0 when a site's smallest step is 0"}[r.FirstStep]
	nulls := r.Nulls
	if nulls == "" {
		nulls = "error"
	}
	acts := "integer actions"
	if r.ActionLabels != nil {
		acts = "action labels " + strings.Join(r.ActionLabels, ", ")
	}
	return fmt.Sprintf("%s; NULLs: %s; %s", fs, nulls, acts)
}
