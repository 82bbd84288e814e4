package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
)

func inspectCommand() *cli.Command {
	o := &InspectOptions{Data: dataGroup{Prep: &prepGroup{}}}
	return withConfig(leaf(&cli.Command{
		Name:      "inspect",
		Usage:     "summarise trajectory data: sites, steps, actions, counts, episode lengths, coverage",
		ArgsUsage: "DATA...",
	}, o, []optionGroup{&o.Data, &o.Workers, &o.Memory, &o.JSON, from(&o.Paths, dataArgs)}, runInspect))
}

// InspectOptions is what the command line of `grmdp inspect` says.
type InspectOptions struct {
	Data    dataGroup
	Workers workersGroup
	Memory  memoryGroup
	// JSON prints the summary as JSON instead of tables.
	JSON jsonGroup
	// Paths are the DATA arguments.
	Paths []string
}

// runInspect reads the data and prints their summary.
func runInspect(ctx context.Context, o InspectOptions, stdout, stderr io.Writer) error {
	do := openOptions(&o.Data, o.Workers, o.Memory, stderr)
	do.InMemory = "an inspection reads every row"
	d, err := dataset.Open(ctx, o.Paths, do)
	if err != nil {
		return dataErr(err)
	}
	rep, err := d.Inspect()
	if err != nil {
		return dataErr(err)
	}
	m := d.Map()
	rep.FeatureNote = m.Note()
	for _, w := range rep.Warnings {
		defer fmt.Fprintf(stderr, "grmdp: warning: %s\n", w)
	}
	if o.JSON.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printInspect(stdout, rep)
	if rep.Cells != nil {
		printCells(stdout, &m, d.Sites(), rep.Cells)
	}
	return nil
}

func printInspect(w io.Writer, rep *dataset.Inspection) {
	fmt.Fprintf(w, "%d rows, %d sites, H = %d, A = %d, %s features (d = %d)\n", rep.Rows, len(rep.Sites), rep.H, rep.Actions, rep.Features, rep.D)
	if rep.FeatureNote != "" {
		fmt.Fprintln(w, rep.FeatureNote)
	}
	fmt.Fprintln(w)
	head := []string{"site", "trajectories"}
	for h := 1; h <= rep.H; h++ {
		head = append(head, fmt.Sprintf("h=%d", h))
	}
	siteTable(w, head, rep.Sites, func(s dataset.SiteSummary) []int { return append([]int{s.Trajectories}, s.RowsByStep...) })
	fmt.Fprintln(w, "\nepisode lengths (count of episodes ending at each step):")
	head = []string{"site"}
	for l := 1; l <= rep.H; l++ {
		head = append(head, fmt.Sprintf("length %d", l))
	}
	siteTable(w, head, rep.Sites, func(s dataset.SiteSummary) []int { return s.Lengths })
	fmt.Fprintln(w, "\nactions taken:")
	head = []string{"site"}
	for a := 0; a < rep.Actions; a++ {
		if len(rep.ActionLabels) > 0 {
			head = append(head, quoteName(rep.ActionLabels[a]))
		} else {
			head = append(head, strconv.Itoa(a))
		}
	}
	siteTable(w, head, rep.Sites, func(s dataset.SiteSummary) []int { return s.ActionCounts })
	fmt.Fprintln(w, "\ncoverage:")
	if len(rep.Uncovered) == 0 {
		fmt.Fprintln(w, "  every site observes every feature")
	}
	for _, u := range rep.Uncovered {
		fmt.Fprintf(w, "  site %s never observes %d of %d features (actions %v)\n", quoteName(u.Site), u.Features, u.Of, u.Actions)
	}
	for _, c := range rep.EmptyCells {
		fmt.Fprintf(w, "  site %s has no data at step %d\n", quoteName(c.Site), c.Step)
	}
}

// siteTable prints a right-aligned table: head, then one row per site of
// its name and cells(site).
func siteTable(w io.Writer, head []string, sites []dataset.SiteSummary, cells func(dataset.SiteSummary) []int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, s := range sites {
		fmt.Fprintf(tw, "%s\t", quoteName(s.Site))
		for _, n := range cells(s) {
			fmt.Fprintf(tw, "%d\t", n)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
