package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
)

// errTooLarge marks an input that would need more memory than --max-memory
// allows. It maps to exit code 3 (the input, not the command line, is the
// problem for this machine).
var errTooLarge = errors.New("input too large for --max-memory")

// The memory model of a read, the bytes per row and per state value of
// the reader's layout, lives beside the reader: parquetio.EstimateMemory.
// The per-(site, step) statistics are small against the rows unless d is
// large (a tabular map with d = S*A in the hundreds of thousands): they have
// their own term here, memPerCellCoord, checked once the table is read.

// memPerCellCoord is the cost of the per-(site, step) statistics: every
// (site, step) cell holds its packed Gram, and the solver the factors,
// inverse diagonals and coefficient vectors of every (group, step), each of
// the size of the packed block layout (d for tabular and indicator maps).
// Measured: a tabular map with S = 1e6, A = 3 (d = 3e6) over 3 sites and 3
// steps peaks at 1.8 GiB, about 67 B per (cell, coordinate). It matters
// only when d is large, which the footers cannot tell; loadData checks it
// after reading, before building the statistics.
const memPerCellCoord = 72

// memoryFlag is --max-memory, shared by the data-reading commands.
func memoryFlag() cli.Flag {
	return &cli.StringFlag{Name: "max-memory", Usage: "refuse inputs estimated (from their Parquet footers) to need more than `SIZE` of memory, " +
		"e.g. 8GiB, 500MB; 0 means no limit (default: 80% of physical memory)"}
}

// memLimit is a --max-memory limit in bytes (0: none) and how to name it.
type memLimit struct {
	bytes int64
	desc  string
}

// memoryLimit returns the --max-memory limit. Commands without the flag get
// the default.
func memoryLimit(c *cli.Context) (memLimit, error) {
	return parseMemoryLimit(c.String("max-memory"))
}

// parseMemoryLimit reads a --max-memory value; "" is the default.
func parseMemoryLimit(value string) (memLimit, error) {
	s := strings.TrimSpace(value)
	if s == "" {
		b := defaultMemoryLimit()
		return memLimit{b, fmt.Sprintf("(default: 80%% of memory, %s)", formatSize(b))}, nil
	}
	n, err := parseSize(s)
	if err != nil {
		return memLimit{}, usagef("--max-memory %q: %v", s, err)
	}
	return memLimit{n, s}, nil
}

// defaultMemoryLimit is 80% of the memory this process may use: physical
// memory, or a smaller cgroup limit. It is 0 (no limit) when neither can be
// read.
func defaultMemoryLimit() int64 {
	total := physicalMemory()
	if cg := cgroupLimit(); cg > 0 && (total == 0 || cg < total) {
		total = cg
	}
	return total / 10 * 8
}

// physicalMemory returns MemTotal from /proc/meminfo, or 0.
func physicalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// cgroupLimit returns the memory limit of this process's cgroup (v2 or
// v1), or 0 when there is none.
func cgroupLimit() int64 {
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v <= 0 || v >= 1<<60 {
			continue // "max", or v1's "no limit" near MaxInt64
		}
		return v
	}
	return 0
}

// parseSize reads a byte count: a number with an optional unit, B, kB, MB,
// GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024); K, M, G
// and T alone are taken as the binary units. Units are case-insensitive;
// "0" means no limit.
func parseSize(s string) (int64, error) {
	i := len(s)
	for i > 0 && !(s[i-1] >= '0' && s[i-1] <= '9' || s[i-1] == '.') {
		i--
	}
	num, unit := strings.TrimSpace(s[:i]), strings.ToLower(strings.TrimSpace(s[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, errors.New("want a size such as 8GiB, 500MB or 0 (no limit)")
	}
	mult := map[string]float64{
		"": 1, "b": 1,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("unknown unit %q: use B, kB, MB, GB, TB, KiB, MiB, GiB or TiB", s[i:])
	}
	b := v * mult
	if b < 1 && v != 0 {
		return 0, errors.New("size below one byte: write 0 for no limit")
	}
	if b >= math.MaxInt64 {
		return 0, errors.New("size too large")
	}
	return int64(b), nil
}

// formatSize prints a byte count in binary units.
func formatSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%d KiB", (b+1023)>>10)
	}
}

// checkMemory refuses, before any data is read, an input whose estimated
// memory exceeds the limit (0: no limit). The estimate needs the footers of
// every file, so missing or unreadable files fail here already, with the
// reader's messages.
func checkMemory(limit memLimit, o dataOptions, paths []string) error {
	if limit.bytes <= 0 {
		return nil
	}
	col := ""
	list := o.Kind == features.Precomputed
	if list {
		col = o.State[0]
	}
	fp, err := parquetio.Measure(paths, col)
	if err != nil {
		return err
	}
	w := len(o.State)
	if list && fp.Rows > 0 {
		w = int((fp.Values + fp.Rows - 1) / fp.Rows)
	}
	estimate := parquetio.EstimateMemory
	if o.heldTwice {
		estimate = parquetio.EstimateMemoryHeldTwice
	}
	need := estimate(fp.Rows, w, list) + fp.InflightMemory(workers.Or(o.Workers), w)
	if need <= limit.bytes {
		return nil
	}
	return &tooLargeError{fmt.Sprintf("%s: %d rows need about %s of memory, more than --max-memory %s allows: "+
		"raise --max-memory (0 = no limit) if the machine has the memory, or shrink the input first with grmdp prepare",
		describePaths(paths), fp.Rows, formatSize(need), limit.desc)}
}

// checkStatsMemory refuses, after reading and before building statistics,
// a feature map whose per-(site, step) statistics would not fit: K sites,
// H steps and a packed layout of size coords per cell, on top of the rows
// already read (estimated as checkMemory does).
func checkStatsMemory(limit memLimit, paths []string, rowsNeed int64, K, H, coords, d int) error {
	if limit.bytes <= 0 {
		return nil
	}
	stats := float64(K)*float64(H)*float64(coords)*memPerCellCoord + 16*float64(d)
	need := float64(rowsNeed) + stats
	if need <= float64(limit.bytes) {
		return nil
	}
	return &tooLargeError{fmt.Sprintf("%s: the statistics of d = %d features at %d sites and %d steps need about %s of memory (with the data, %s), more than --max-memory %s allows: "+
		"use fewer features (--num-states, fewer state columns) or raise --max-memory (0 = no limit) if the machine has the memory",
		describePaths(paths), d, K, H, formatSize(int64(min(stats, math.MaxInt64/2))), formatSize(int64(min(need, math.MaxInt64/2))), limit.desc)}
}

// memSimulateFactor scales the read model for grmdp simulate, which holds
// the sampled chunks, the built table and the writer's buffers: measured
// 5.6 GiB peak for the trap scenario with 1000 sites (23.3M rows, W = 3),
// 0.95 GiB for the benchmark with 4M rows.
const memSimulateFactor = 1.5

// checkSimulationMemory refuses, before sampling, a simulation whose rows
// (at most sum N_k * H) would not fit in the memory limit. The flags alone
// ask for it, so it is a usage error (exit 2).
func checkSimulationMemory(limit memLimit, m sim.Model) error {
	if limit.bytes <= 0 {
		return nil
	}
	var traj int64
	for _, n := range m.Trajectories() {
		traj += int64(n)
	}
	rows := traj * int64(m.Horizon())
	fm := m.Map()
	need := float64(parquetio.EstimateMemoryHeldTwice(rows, fm.Width(), fm.Kind == features.Precomputed)) * memSimulateFactor
	if need <= float64(limit.bytes) {
		return nil
	}
	// The flags alone ask for this much: a usage error.
	return &usageError{fmt.Sprintf("the %s scenario with %d sites, %d trajectories and H = %d gives up to %d rows, which need about %s of memory, more than --max-memory %s allows: "+
		"simulate fewer sites or trajectories, or raise --max-memory (0 = no limit) if the machine has the memory",
		m.Scenario(), len(m.Trajectories()), traj, m.Horizon(), rows, formatSize(int64(min(need, math.MaxInt64/2))), limit.desc)}
}

// describePaths names the DATA arguments in a message: all of them, or the
// first three and a count.
func describePaths(paths []string) string {
	if len(paths) > 3 {
		return fmt.Sprintf("%s and %d more", strings.Join(paths[:3], ", "), len(paths)-3)
	}
	return strings.Join(paths, ", ")
}

// packedSize returns the size of the packed block layout of a map with
// fixed blocks: d diagonal entries for tabular and indicator maps, A
// triangles of p(p+1)/2 for action-block.
func packedSize(m features.Map) int {
	if m.Kind == features.ActionBlock {
		return m.A * m.P * (m.P + 1) / 2
	}
	if m.Kind == features.SoftBinned {
		k := m.Dim() / m.A
		return m.A * k * (k + 1) / 2
	}
	return m.Dim()
}

type tooLargeError struct{ msg string }

func (e *tooLargeError) Error() string { return e.msg }
func (e *tooLargeError) Unwrap() error { return errTooLarge }
