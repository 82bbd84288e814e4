package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/io/fileio"
)

func clusterCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "similarity", Usage: "similarity `FILE`: a site,cluster assignment (CSV or JSON), a square similarity matrix (CSV), or an edge list site_a,site_b,similarity", Required: true},
		&cli.Float64Flag{Name: "threshold", Usage: "clusters are the connected components of similarity >= `T`"},
		&cli.IntFlag{Name: "num-clusters", Usage: "average-linkage clustering cut at `M` clusters"},
		// --clusters is a cluster file in every other command: as a count
		// here it is refused, naming --num-clusters.
		&cli.StringFlag{Name: "clusters", Hidden: true},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "clusters.json `FILE` to write", Required: true},
		&cli.BoolFlag{Name: "allow-singletons", Usage: "keep data sites missing from the file as clusters of their own"},
	}
	flags = append(flags, dataFlags()...)
	return withConfig(&cli.Command{
		Name:      "cluster",
		Usage:     "turn a similarity file into site clusters (clusters.json)",
		ArgsUsage: "[DATA...]",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			if c.IsSet("clusters") {
				return usagef("--clusters %s: the number of clusters is --num-clusters %[1]s (--clusters names a cluster file in solve, eval and compare)", c.String("clusters"))
			}
			opts := cluster.Options{M: c.Int("num-clusters")}
			if c.IsSet("threshold") {
				opts.Threshold, opts.HasThreshold = c.Float64("threshold"), true
			}
			out := c.String("output")
			if err := prepareOutput(c.Context, out); err != nil {
				return err
			}
			a, err := cluster.Load(c.String("similarity"), opts)
			if err != nil {
				return err
			}
			counts := map[string]int{}
			paths := dataArgs(c)
			if len(paths) > 0 {
				o, err := parseDataOptions(c)
				if err != nil {
					return err
				}
				o.InMemory = "cluster counts every site's trajectories"
				d, err := dataset.Open(c.Context, paths, o)
				if err != nil {
					return dataErr(err)
				}
				t := d.Table()
				_, _, warns, err := a.Groups(t.Sites, c.Bool("allow-singletons"))
				if err != nil {
					return err
				}
				for _, w := range warns {
					fmt.Fprintf(c.App.ErrWriter, "grmdp: warning: %v\n", w)
				}
				for k, s := range t.Sites {
					counts[s] = t.Trajectories[k]
				}
			}
			if err := fileio.WriteAtomic(out, a.WriteJSON); err != nil {
				return err
			}
			printClusters(c.App.Writer, a, counts, len(paths) > 0)
			fmt.Fprintf(c.App.Writer, "wrote %s\n", out)
			return nil
		},
	})
}

func printClusters(w io.Writer, a *cluster.Assignment, counts map[string]int, withData bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if withData {
		fmt.Fprintln(tw, "cluster\tsites\ttrajectories")
	} else {
		fmt.Fprintln(tw, "cluster\tsites")
	}
	for _, cl := range a.Clusters {
		if withData {
			n := 0
			for _, s := range cl.Sites {
				n += counts[s]
			}
			fmt.Fprintf(tw, "%s\t%v\t%d\n", cl.Name, cl.Sites, n)
		} else {
			fmt.Fprintf(tw, "%s\t%v\n", cl.Name, cl.Sites)
		}
	}
	tw.Flush()
}
