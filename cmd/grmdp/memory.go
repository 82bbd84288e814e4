package main

import (
	"fmt"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
)

// memoryFlag is --max-memory, shared by the data-reading commands.
func memoryFlag() cli.Flag {
	return &cli.StringFlag{Name: "max-memory", Usage: "refuse inputs estimated (from their Parquet footers) to need more than `SIZE` of memory, " +
		"e.g. 8GiB, 500MB; 0 means no limit (default: 80% of physical memory)"}
}

// memoryLimit returns the --max-memory limit. Commands without the flag get
// the default.
func memoryLimit(c *cli.Context) (dataset.Limit, error) {
	l, err := dataset.ParseLimit(c.String("max-memory"))
	return l, dataErr(err)
}

// applyMaxMemory makes a command's --max-memory the runtime's soft memory
// limit (dataset.SetMemoryLimit; commands without the flag keep the
// runtime's default). A value that does not parse is left to the command,
// which reports it where it reads it.
func applyMaxMemory(c *cli.Context) {
	if !hasFlag(c.Command, "max-memory") {
		return
	}
	if l, err := memoryLimit(c); err == nil {
		dataset.SetMemoryLimit(l.Bytes)
	}
}

// hasFlag says whether cmd has the flag name.
func hasFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// memSimulateFactor scales the read model for grmdp simulate, which holds
// the sampled chunks, the built table and the writer's buffers: measured
// 5.6 GiB peak for the trap scenario with 1000 sites (23.3M rows, W = 3),
// 0.95 GiB for the benchmark with 4M rows.
const memSimulateFactor = 1.5

// checkSimulationMemory refuses, before sampling, a simulation whose rows
// (at most sum N_k * H) would not fit in the memory limit. The flags alone
// ask for it, so it is a usage error (exit 2).
func checkSimulationMemory(limit dataset.Limit, m sim.Model) error {
	if limit.Bytes <= 0 {
		return nil
	}
	var traj int64
	for _, n := range m.Trajectories() {
		traj += int64(n)
	}
	rows := traj * int64(m.Horizon())
	fm := m.Map()
	need := float64(parquetio.EstimateMemoryHeldTwice(rows, fm.Width(), fm.Kind == features.Precomputed)) * memSimulateFactor
	if need <= float64(limit.Bytes) {
		return nil
	}
	// The flags alone ask for this much: a usage error.
	return &usageError{fmt.Sprintf("the %s scenario with %d sites, %d trajectories and H = %d gives up to %d rows, which need about %s of memory, more than --max-memory %s allows: "+
		"simulate fewer sites or trajectories, or raise --max-memory (0 = no limit) if the machine has the memory",
		m.Scenario(), len(m.Trajectories()), traj, m.Horizon(), rows, dataset.FormatSize(int64(min(need, math.MaxInt64/2))), limit.Name)}
}
