package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

func inspectCommand() *cli.Command {
	flags := append(dataFlags(), &cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"})
	return withConfig(&cli.Command{
		Name:      "inspect",
		Usage:     "summarise trajectory data: sites, steps, actions, counts, episode lengths, coverage",
		ArgsUsage: "DATA...",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			o, err := parseDataOptions(c)
			if err != nil {
				return err
			}
			ds, err := loadData(c.Context, o, dataArgs(c), c.App.ErrWriter)
			if err != nil {
				return err
			}
			rep := inspectData(ds)
			rep.FeatureNote, rep.Warnings = mapNote(ds.Map), ds.Warnings
			rep.Cells = binnedCells(ds)
			for _, w := range ds.Warnings {
				defer fmt.Fprintf(c.App.ErrWriter, "grmdp: warning: %s\n", w)
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printInspect(c.App.Writer, rep)
			if rep.Cells != nil {
				printCells(c.App.Writer, &ds.Map, ds.Table.Sites, rep.Cells)
			}
			return nil
		},
	})
}

type inspectReport struct {
	Rows         int               `json:"rows"`
	Sites        []inspectSite     `json:"sites"`
	H            int               `json:"H"`
	Actions      int               `json:"actions"`
	ActionLabels []string          `json:"action_labels"`
	Features     string            `json:"features"`
	D            int               `json:"d"`
	Sources      []traj.Source     `json:"sources"`
	Uncovered    []solve.Uncovered `json:"uncovered"`
	EmptyCells   []solve.Cell      `json:"empty_cells"`
	// FeatureNote says what the map does to the state columns ("" when it
	// reads them as they are).
	FeatureNote string `json:"feature_note,omitempty"`
	// Cells[k][cell] counts site k's rows per cell of a binned map.
	Cells    [][]int  `json:"cells,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Nulls counts the rows and episodes --nulls removed, per site.
	Nulls []traj.NullCount `json:"nulls,omitempty"`
}

type inspectSite struct {
	Site         string `json:"site"`
	Trajectories int    `json:"trajectories"`
	// RowsByStep[h-1] is the number of rows at step h.
	RowsByStep []int `json:"rows_by_step"`
	// Lengths[l-1] counts episodes of length l.
	Lengths []int `json:"episode_lengths"`
	// ActionCounts[a] counts rows taking action a.
	ActionCounts []int `json:"action_counts"`
	// Coverage[i] counts rows whose feature i is nonzero.
	Coverage []float64 `json:"coverage"`
}

func inspectData(ds *dataset) inspectReport {
	t := ds.Table
	rep := inspectReport{Rows: t.Rows, H: t.H, Actions: t.A, ActionLabels: t.Actions, Features: ds.Map.Kind.String(), D: ds.Map.Dim(), Sources: t.Sources, Nulls: t.Nulls}
	if rep.ActionLabels == nil {
		rep.ActionLabels = []string{}
	}
	// Coverage and empty cells come from the diagnostics of a behaviour
	// policy, which needs no solve.
	sv := solve.NewSolver(ds.Stats, solve.DefaultSettings)
	p, _ := sv.Solve(nil, solve.Problem{Method: solve.Behaviour})
	dg := solve.Diagnose(ds.Stats, p)
	rep.Uncovered, rep.EmptyCells = dg.Uncovered, dg.EmptyCells
	for k, name := range t.Sites {
		s := inspectSite{Site: name, Trajectories: t.Trajectories[k], RowsByStep: make([]int, t.H), Lengths: make([]int, t.H), ActionCounts: make([]int, t.A), Coverage: dg.Coverage[k]}
		for h := 1; h <= t.H; h++ {
			st := &t.Steps[h-1]
			for j := int(st.SiteStart[k]); j < int(st.SiteStart[k+1]); j++ {
				s.RowsByStep[h-1]++
				s.ActionCounts[st.Action[j]]++
				if st.Next[j] < 0 {
					s.Lengths[h-1]++
				}
			}
		}
		rep.Sites = append(rep.Sites, s)
	}
	return rep
}

func printInspect(w io.Writer, rep inspectReport) {
	fmt.Fprintf(w, "%d rows, %d sites, H = %d, A = %d, %s features (d = %d)\n", rep.Rows, len(rep.Sites), rep.H, rep.Actions, rep.Features, rep.D)
	if rep.FeatureNote != "" {
		fmt.Fprintln(w, rep.FeatureNote)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "site\ttrajectories\t")
	for h := 1; h <= rep.H; h++ {
		fmt.Fprintf(tw, "h=%d\t", h)
	}
	fmt.Fprintln(tw)
	for _, s := range rep.Sites {
		fmt.Fprintf(tw, "%s\t%d\t", s.Site, s.Trajectories)
		for _, n := range s.RowsByStep {
			fmt.Fprintf(tw, "%d\t", n)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nepisode lengths (count of episodes ending at each step):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "site\t")
	for l := 1; l <= rep.H; l++ {
		fmt.Fprintf(tw, "length %d\t", l)
	}
	fmt.Fprintln(tw)
	for _, s := range rep.Sites {
		fmt.Fprintf(tw, "%s\t", s.Site)
		for _, n := range s.Lengths {
			fmt.Fprintf(tw, "%d\t", n)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nactions taken:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "site\t")
	for a := 0; a < rep.Actions; a++ {
		if len(rep.ActionLabels) > 0 {
			fmt.Fprintf(tw, "%s\t", rep.ActionLabels[a])
		} else {
			fmt.Fprintf(tw, "%d\t", a)
		}
	}
	fmt.Fprintln(tw)
	for _, s := range rep.Sites {
		fmt.Fprintf(tw, "%s\t", s.Site)
		for _, n := range s.ActionCounts {
			fmt.Fprintf(tw, "%d\t", n)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w, "\ncoverage:")
	if len(rep.Uncovered) == 0 {
		fmt.Fprintln(w, "  every site observes every feature")
	}
	for _, u := range rep.Uncovered {
		fmt.Fprintf(w, "  site %s never observes %d of %d features (actions %v)\n", u.Site, u.Features, u.Of, u.Actions)
	}
	for _, c := range rep.EmptyCells {
		fmt.Fprintf(w, "  site %s has no data at step %d\n", c.Site, c.Step)
	}
}
