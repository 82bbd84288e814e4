package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/traj"
)

func clusterCommand() *cli.Command {
	o := &ClusterOptions{Output: outputGroup{usage: "clusters.json `FILE` to write"}}
	return withConfig(leaf(&cli.Command{
		Name:      "cluster",
		Usage:     "turn a similarity file into site clusters (clusters.json)",
		ArgsUsage: "[DATA...]",
	}, o, []optionGroup{own{[]cli.Flag{
		&cli.StringFlag{Name: "similarity", Usage: "similarity `FILE`: a site,cluster assignment (CSV or JSON), a square similarity matrix (CSV), or an edge list site_a,site_b,similarity", Required: true, Destination: &o.Similarity},
		&cli.Float64Flag{Name: "threshold", Usage: "clusters are the connected components of similarity >= `T`", Destination: &o.Options.Threshold},
		&cli.IntFlag{Name: "num-clusters", Usage: "average-linkage clustering cut at `M` clusters", Destination: &o.Options.M},
		// --clusters is a cluster file in every other command: as a count
		// here it is refused, naming --num-clusters.
		&cli.StringFlag{Name: "clusters", Hidden: true, Destination: &o.Count},
	}, func(c *cli.Command) error {
		o.Options.HasThreshold = c.IsSet("threshold")
		return nil
	}}, &o.Output, own{fl: []cli.Flag{
		&cli.BoolFlag{Name: "allow-singletons", Usage: "keep data sites missing from the file as clusters of their own", Destination: &o.AllowSingletons},
		&cli.StringFlag{Name: "site-col", Value: "site", Usage: "site column of DATA", Destination: &o.Columns.Site},
		&cli.StringFlag{Name: "traj-col", Value: "traj", Usage: "trajectory column of DATA", Destination: &o.Columns.Traj},
	}}, &o.Workers, from(&o.Paths, dataArgs)}, runCluster))
}

// ClusterOptions is what the command line of `grmdp cluster` says.
type ClusterOptions struct {
	// Similarity is the similarity file, Options how to cut it.
	Similarity string
	Options    cluster.Options
	// Count is a --clusters given here, refused: the count is
	// --num-clusters.
	Count           string
	Output          outputGroup
	AllowSingletons bool
	// Columns name the site and trajectory columns of the data, which
	// give the sites and their trajectory counts.
	Columns traj.Columns
	Workers workersGroup
	// Paths are the DATA arguments (none: no counts).
	Paths []string
}

// runCluster cuts the similarity file into clusters, checks them against
// the data's sites and writes clusters.json.
func runCluster(ctx context.Context, o ClusterOptions, stdout, stderr io.Writer) error {
	if o.Count != "" {
		return usagef("--clusters %s: the number of clusters is --num-clusters %[1]s (--clusters names a cluster file in solve, eval and compare)", o.Count)
	}
	out := o.Output.Path
	if err := prepareOutput(ctx, out); err != nil {
		return err
	}
	a, err := cluster.Load(o.Similarity, o.Options)
	if err != nil {
		return err
	}
	counts, warns, err := dataset.ClusterCounts(ctx, a, o.Paths, traj.Options{Columns: o.Columns, Workers: o.Workers.Workers}, o.AllowSingletons)
	if err != nil {
		return err
	}
	tell(stderr, "warning", warns)
	if err := fileio.WriteAtomic(out, a.WriteJSON); err != nil {
		return err
	}
	if err := a.WriteText(stdout, counts); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return nil
}
