package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/msgio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Federated defaults: disclosure thresholds at a site, and the fewest
// sites a job may have.
const (
	fedMinCount = 5
	fedMinRows  = 10
	fedMinSites = 3
)

func federateCommand() *cli.Command {
	return &cli.Command{
		Name:  "federate",
		Usage: "solve over hospitals that keep their rows: rounds of aggregate messages between sites and a coordinator",
		Description: "A coordinator makes a job (init); each round, every site computes its message from its own data (site),\n" +
			"a data steward can read it in plain words (show), and the coordinator folds the round (step). After the last\n" +
			"round the job holds policy.parquet, the policy a central solve --min-count K of all the rows would give.\n" +
			"eval opens the evaluation of a policy on a finished job, whose rounds the sites answer and step folds the same way.\n" +
			"run plays every part locally, as separate processes exchanging only files.",
		Subcommands: []*cli.Command{fedInitCommand(), fedSiteCommand(), fedStepCommand(), fedShowCommand(), fedRunCommand(), fedEvalCommand()},
	}
}

// fedErr maps the protocol's refusals and unreadable messages to bad
// input (exit 3).
func fedErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, federate.ErrRefused) || errors.Is(err, msgio.ErrBadFile) {
		return badInputf("%w", err)
	}
	return err
}

func fedInitCommand() *cli.Command {
	flags := append(dataFlags(), solverFlags()...)
	flags = append(flags,
		&cli.StringFlag{Name: "method", Value: "sitewise", Usage: "sitewise, cluster, pooled, pevi-pooled, pevi-avg, pevi-min or behaviour"},
		&cli.StringFlag{Name: "sites", Usage: "the sites of the job, comma separated `A,B,C`", Required: true},
		&cli.IntFlag{Name: "min-sites", Value: fedMinSites, Usage: "refuse a job with fewer than `N` sites"},
		&cli.IntFlag{Name: "dim", Usage: "precomputed map: the number of features per action `d` (the list column holds A*d values)"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "job `DIR` to create", Required: true},
	)
	flags = append(flags, disclosureFlags(fedMinCount, fedMinRows)...)
	return withConfig(&cli.Command{
		Name:      "init",
		Usage:     "make a federated job: settings, feature map with its sizes, expected sites, privacy thresholds",
		ArgsUsage: " ",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			return fedErr(runFederateInit(c, c.App.Writer))
		},
	})
}

func runFederateInit(c *cli.Context, stdout io.Writer) error {
	if c.Args().Len() > 0 {
		return usagef("federate init reads no data (got %v): each site reads its own with grmdp federate site", c.Args().Slice())
	}
	o, err := parseDataOptions(c)
	if err != nil {
		return err
	}
	s, err := parseSettings(c)
	if err != nil {
		return err
	}
	method, err := solve.ParseMethod(c.String("method"))
	if err != nil {
		return usagef("--method: %v", err)
	}
	dc, err := parseDisclosure(c)
	if err != nil {
		return err
	}
	var sites []string
	for _, x := range strings.Split(c.String("sites"), ",") {
		if x = strings.TrimSpace(x); x != "" {
			sites = append(sites, x)
		}
	}
	switch {
	case o.Horizon < 1:
		return usagef("federate init needs --horizon H: no single site's data decide it")
	case o.Actions < 1:
		return usagef("federate init needs --actions A: no single site's data decide it")
	case o.Kind == features.Tabular && o.NumStates < 1:
		return usagef("federate init with the tabular map needs --num-states S")
	case o.Kind == features.ActionBlock && o.State == nil:
		return usagef("federate init with the action-block map needs its state columns: --state s1,s2,...")
	case o.Kind == features.Precomputed && c.Int("dim") < 1:
		return usagef("federate init with the precomputed map needs --dim d, the number of features per action")
	case c.IsSet("dim") && o.Kind != features.Precomputed:
		return usagef("--dim is for --features precomputed, not %s", o.Kind)
	case quantileBins(o.Bins):
		return usagef("--bins: quantile cut points (COL:qK) are type-7 quantiles over every site's rows, which no sum of one site's rows gives: give explicit cut points, --bins COL:c1,c2,...")
	}
	m := features.Map{Kind: o.Kind, A: o.Actions, StateColumns: o.State, Bins: o.Bins}
	switch o.Kind {
	case features.Tabular:
		m.S = o.NumStates
	case features.ActionBlock:
		m.P = len(o.State)
	case features.Precomputed:
		m.D = c.Int("dim")
	}
	j := &federate.Job{FormatVersion: federate.FormatVersion, ID: federate.NewID(), Method: method, Map: m, H: o.Horizon,
		Lambda: s.Lambda, C: s.C, Xi: s.Xi, Beta: s.Beta, BetaGiven: s.BetaSet, Fallback: s.Fallback, Stationary: s.Stationary,
		Columns: federate.Columns(o.Columns), Sites: sites, Disclosure: dc, MinSites: c.Int("min-sites"), Settings: settingsUsed(c)}
	if method == solve.Cluster {
		path := c.String("clusters")
		if path == "" {
			return usagef("--method cluster needs --clusters FILE")
		}
		opts := cluster.Options{M: c.Int("num-clusters")}
		if c.IsSet("threshold") {
			opts.Threshold, opts.HasThreshold = c.Float64("threshold"), true
		}
		a, err := cluster.Load(path, opts)
		if err != nil {
			return err
		}
		groups, names, _, err := a.Groups(sites, c.Bool("allow-singletons"))
		if err != nil {
			return err
		}
		for i, g := range groups {
			cl := federate.Cluster{Name: names[i]}
			for _, k := range g {
				cl.Sites = append(cl.Sites, sites[k])
			}
			j.Clusters = append(j.Clusters, cl)
		}
	}
	if len(sites) < j.MinSites {
		return usagef("--sites names %d sites, fewer than --min-sites %d", len(sites), j.MinSites)
	}
	dir := c.String("output")
	if err := federate.Create(dir, j); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "job %s in %s: %s, %s map (d = %d), %d rounds (%d steps, then the value round), sites %s; min count %d, min rows %d\n",
		j.ID, dir, method, m.Kind, m.Dim(), j.Rounds(), j.H, strings.Join(sites, ", "), dc.MinCount, dc.MinRows)
	fmt.Fprintf(stdout, "next, at each site: grmdp federate site --job %s --site SITE -o SITE-round0.parquet DATA\n", dir)
	return nil
}

func fedSiteCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "job", Usage: "the job `DIR` (its job.json and state.json)", Required: true},
		&cli.StringFlag{Name: "site", Usage: "this site's name, as the job lists it", Required: true},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "message `FILE` to write (Parquet)", Required: true},
		&cli.IntFlag{Name: "workers", Usage: "parallel workers (default: all cores); results do not depend on it"},
		memoryFlag(),
		&cli.StringFlag{Name: "cache", Usage: "keep this site's rows in `DIR` (readable by you only) after the first round, so that " +
			"later rounds read two steps of them instead of the whole data; rebuilt when a data file or the job changes"},
	}
	flags = append(flags, disclosureFlags(fedMinCount, fedMinRows)...)
	return withConfig(&cli.Command{
		Name:      "site",
		Usage:     "compute this site's message for the job's current round from its own data (aggregates only)",
		ArgsUsage: "DATA...",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			return fedErr(runFederateSite(c.Context, c, c.App.Writer))
		},
	})
}

// siteDisclosure returns the thresholds a site applies: its flags, never
// below the job's (a flag left unset takes the larger of its default and
// the job's).
func siteDisclosure(c *cli.Context, j *federate.Job) (solve.Disclosure, error) {
	dc, err := parseDisclosure(c)
	if err != nil {
		return dc, err
	}
	for _, x := range []struct {
		name     string
		v        *int
		job      int
		explicit bool
	}{{"min-count", &dc.MinCount, j.Disclosure.MinCount, c.IsSet("min-count")}, {"min-rows", &dc.MinRows, j.Disclosure.MinRows, c.IsSet("min-rows")}} {
		switch {
		case x.explicit && *x.v < x.job:
			return dc, usagef("--%s %d is below the job's %d: a site may be stricter than the job, never looser", x.name, *x.v, x.job)
		case !x.explicit:
			*x.v = max(*x.v, x.job)
		}
	}
	return dc, nil
}

func runFederateSite(ctx context.Context, c *cli.Context, stdout io.Writer) error {
	j, s, err := federate.Load(c.String("job"))
	if err != nil {
		return err
	}
	dc, err := siteDisclosure(c, j)
	if err != nil {
		return err
	}
	msg, err := siteMessage(ctx, c, j, s, c.String("site"), dc, c.Args().Slice(), c.String("job"))
	if err != nil {
		return err
	}
	out := c.String("output")
	n, err := writeMessage(out, msg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "site %s, %s: wrote %s (%d bytes): sums only, no row\n", msg.Site, roundWords(j, msg), out, n)
	switch {
	case msg.Silent:
		fmt.Fprintf(stdout, "  fewer than %d rows at step %d: the site contributes nothing to this step\n", dc.MinRows, msg.Step)
	case msg.Suppressed > 0:
		fmt.Fprintf(stdout, "  %d features withheld, each counted at fewer than %d rows\n", msg.Suppressed, dc.MinCount)
	}
	fmt.Fprintf(stdout, "  read it in plain words: grmdp federate show %s\n", out)
	return nil
}

// siteMessage reads a site's data as solve reads them (the same
// validation) under the job's map and the site's thresholds, and computes
// its message for the job's round.
// Once the job is finished, the round is its open evaluation's (in
// jobDir/eval; "" when there is no job directory).
func siteMessage(ctx context.Context, c *cli.Context, j *federate.Job, s *federate.State, site string, dc solve.Disclosure, paths []string, jobDir string) (*federate.Message, error) {
	var ev *openEval
	if s.Done(j) {
		var err error
		if ev, err = openEvalFor(jobDir, j); err != nil {
			return nil, err
		}
	}
	o := dataOptions{Kind: j.Map.Kind, State: j.Map.StateColumns, Bins: j.Map.Bins, Columns: traj.Columns(j.Columns), Horizon: j.H,
		Actions: j.Map.A, Workers: c.Int("workers"), Disclosure: dc}
	if j.Map.Kind == features.Tabular {
		o.NumStates = j.Map.S
	}
	ds, err := siteData(ctx, o, paths, j, s, site, c.String("cache"), c.App.ErrWriter)
	if err != nil {
		return nil, err
	}
	numeric := false
	for _, arg := range paths {
		if files := expandArg(arg); len(files) > 0 {
			if numeric, err = msgio.IntegerColumn(files[0], j.Columns.Site); err != nil {
				return nil, err
			}
			break
		}
	}
	var sources []traj.Source
	for _, src := range ds.Table.Sources {
		src.Path = filepath.Base(src.Path)
		sources = append(sources, src)
	}
	in := federate.SiteInput{Stats: ds.Stats, Site: site, Numeric: numeric, Sources: sources}
	if ev != nil {
		return federate.EvalMessage(ctx, j, s, ev.state, ev.policy, in)
	}
	return federate.SiteMessage(ctx, j, s, in)
}

// writeMessage writes msg to path and returns its size in bytes.
func writeMessage(path string, msg *federate.Message) (int64, error) {
	meta, vecs, err := msg.Encode()
	if err != nil {
		return 0, err
	}
	mv := make([]msgio.Vector, len(vecs))
	for i, v := range vecs {
		mv[i] = msgio.Vector(v)
	}
	if err := msgio.Write(path, meta, mv); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// readMessage reads and checks a message file.
func readMessage(path string) (federate.Incoming, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return federate.Incoming{}, err
	}
	sum := sha256.Sum256(b)
	meta, vecs, err := msgio.Read(path)
	if err != nil {
		return federate.Incoming{}, err
	}
	fv := make([]federate.Vec, len(vecs))
	for i, v := range vecs {
		fv[i] = federate.Vec(v)
	}
	msg, err := federate.Decode(path, meta, fv)
	if err != nil {
		return federate.Incoming{}, err
	}
	return federate.Incoming{File: filepath.Base(path), Bytes: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), Msg: msg}, nil
}

func fedStepCommand() *cli.Command {
	return &cli.Command{
		Name:      "step",
		Usage:     "fold one round's messages (one per site) into the job and advance it; after the last round write JOB/policy.parquet",
		ArgsUsage: "MSG...",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "job", Usage: "the job `DIR`", Required: true},
		},
		Action: func(c *cli.Context) error {
			return fedErr(runFederateStep(c.Context, c.String("job"), c.Args().Slice(), c.App.Writer, c.App.ErrWriter))
		},
	}
}

func runFederateStep(ctx context.Context, dir string, paths []string, stdout, stderr io.Writer) error {
	unlock, err := federate.Lock(dir)
	if err != nil {
		return err
	}
	defer unlock()
	j, s, err := federate.Load(dir)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return usagef("no MSG given: name one message file per site")
	}
	var in []federate.Incoming
	var bytes int64
	for _, p := range paths {
		inc, err := readMessage(p)
		if err != nil {
			return err
		}
		bytes += inc.Bytes
		in = append(in, inc)
	}
	if s.Done(j) {
		return foldEvalRound(ctx, dir, j, s, in, bytes, stdout)
	}
	next, err := federate.Fold(ctx, j, s, in)
	if err != nil {
		return err
	}
	h := j.StepOf(s.Round)
	if next.Done(j) {
		return finishJob(dir, j, next, len(in), bytes, stdout, stderr)
	}
	if err := federate.SaveState(dir, next); err != nil {
		return err
	}
	next1 := fmt.Sprintf("step %d", h-1)
	if j.ValueRound(next.Round) {
		next1 = "the value round"
	}
	fmt.Fprintf(stdout, "round %d of %d folded (step %d, %d sites, %d bytes); next round: %s\n", s.Round+1, j.Rounds(), h, len(in), bytes, next1)
	return nil
}

func fedShowCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print a site message in plain words, for the data steward who releases it",
		ArgsUsage: "MSG",
		Action: func(c *cli.Context) error {
			if c.Args().Len() != 1 {
				return usagef("federate show takes one message file")
			}
			inc, err := readMessage(c.Args().First())
			if err != nil {
				return fedErr(err)
			}
			showMessage(c.App.Writer, c.Args().First(), inc)
			return nil
		},
	}
}

// showMessage prints what a message discloses, in words.
func showMessage(w io.Writer, path string, inc federate.Incoming) {
	m := inc.Msg
	dc := m.Disclosure
	if m.Kind != "" {
		showSums(w, path, inc)
		return
	}
	fmt.Fprintf(w, "%s is site %s's message for round %d (step %d) of federated job %s.\n", path, m.Site, m.Round+1, m.Step, m.JobID)
	fmt.Fprintf(w, "It holds sums over the site's rows and no row of data. Its checksum is verified (%s).\n\n", m.Checksum[:16])
	fmt.Fprintf(w, "Disclosure control: a count below %d is withheld, with the counts beside it that would give it away; with fewer than %d rows at the step the site sends nothing for it.\n\n", dc.MinCount, max(dc.MinRows, dc.MinCount))
	fmt.Fprintf(w, "Totals: %d trajectories (patients' episodes) and %d rows over every step.\n", m.Trajectories, m.Rows)
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
		fmt.Fprintf(tw, "      %s\t%s\n", federate.FeatureName(&m.Map, i), v)
		shown++
	}
	tw.Flush()
	if m.Suppressed > 0 {
		fmt.Fprintf(w, "  %d observed features were withheld (counted at fewer than %d rows, or beside such a count): their sums are zero.\n", m.Suppressed, dc.MinCount)
	}
	fmt.Fprintf(w, "\nData files it was computed from:\n")
	for _, s := range m.Sources {
		fmt.Fprintf(w, "  %s (%d bytes, %d rows, fingerprint %s)\n", s.Path, s.Size, s.Rows, s.Fingerprint[:min(16, len(s.Fingerprint))])
	}
	fmt.Fprintf(w, "Message file: %d bytes, SHA-256 %s\n", inc.Bytes, inc.SHA256)
}
