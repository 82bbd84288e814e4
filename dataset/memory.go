package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/io/parquetio"
)

// The memory model of a read, the bytes per row and per state value of
// the reader's layout, lives beside the reader: parquetio.EstimateMemory.
// The per-(site, step) statistics are small against the rows unless d is
// large (a tabular map with d = S*A in the hundreds of thousands): they have
// their own term here, memPerCellCoord, checked once the table is read.

// memPerCellCoord is the cost of the per-(site, step) statistics: every
// (site, step) cell holds its packed Gram, and the solver the factors,
// inverse diagonals and coefficient vectors of every (group, step), each of
// the size of the packed block layout (d for tabular and indicator maps).
// A tabular map with S = 1e6, A = 3 (d = 3e6) over 3 sites and 3 steps
// peaks at 1.8 GiB, about 67 B per (cell, coordinate). It matters only
// when d is large, which the footers cannot tell; Open checks it after
// reading, before building the statistics.
const memPerCellCoord = 72

// Limit is a memory limit in bytes (0: none) and how to name it.
type Limit struct {
	Bytes int64
	Name  string
}

// ParseLimit reads a memory limit: a size such as 8GiB or 500MB, "0" for
// no limit, or "" for the default, 80% of the memory this process may use
// ([DefaultLimit]).
func ParseLimit(value string) (Limit, error) {
	s := strings.TrimSpace(value)
	if s == "" {
		b := DefaultLimit()
		return Limit{b, fmt.Sprintf("(default: 80%% of memory, %s)", FormatSize(b))}, nil
	}
	n, err := ParseSize(s)
	if err != nil {
		return Limit{}, optionErr("MaxMemory", strconv.Quote(s), "%v", err)
	}
	return Limit{n, s}, nil
}

// DefaultLimit is 80% of the memory this process may use: physical
// memory, or a smaller cgroup limit. It is 0 (no limit) when neither can be
// read.
func DefaultLimit() int64 {
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

// ParseSize reads a byte count: a number with an optional unit, B, kB, MB,
// GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024); K, M, G
// and T alone are taken as the binary units. Units are case-insensitive;
// "0" means no limit.
func ParseSize(s string) (int64, error) {
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

// FormatSize prints a byte count in binary units.
func FormatSize(b int64) string {
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
func checkMemory(limit Limit, o *Options, paths []string) error {
	if limit.Bytes <= 0 {
		return nil
	}
	col := ""
	list := o.Map.Kind == features.Precomputed
	if list {
		col = o.Map.StateColumns[0]
	}
	fp, err := parquetio.Measure(paths, col)
	if err != nil {
		return err
	}
	w := len(o.Map.StateColumns)
	if list && fp.Rows > 0 {
		w = int((fp.Values + fp.Rows - 1) / fp.Rows)
	}
	estimate := parquetio.EstimateMemory
	if o.heldTwice {
		estimate = parquetio.EstimateMemoryHeldTwice
	}
	need := estimate(fp.Rows, w, list) + fp.InflightMemory(workers.Or(o.Workers), w)
	if need <= limit.Bytes {
		return nil
	}
	return &TooLargeError{What: fmt.Sprintf("%s: %d rows need about %s of memory", describePaths(paths), fp.Rows, FormatSize(need)),
		Limit: limit.Name, Remedy: RaiseLimitOrPrepare}
}

// checkStatsMemory refuses, after reading and before building statistics,
// a feature map whose per-(site, step) statistics would not fit: K sites,
// H steps and a packed layout of size coords per cell, on top of the rows
// already read (estimated as checkMemory does).
func checkStatsMemory(limit Limit, paths []string, rowsNeed int64, K, H, coords, d int) error {
	if limit.Bytes <= 0 {
		return nil
	}
	stats := float64(K)*float64(H)*float64(coords)*memPerCellCoord + 16*float64(d)
	need := float64(rowsNeed) + stats
	if need <= float64(limit.Bytes) {
		return nil
	}
	return &TooLargeError{What: fmt.Sprintf("%s: the statistics of d = %d features at %d sites and %d steps need about %s of memory (with the data, %s)",
		describePaths(paths), d, K, H, FormatSize(int64(min(stats, math.MaxInt64/2))), FormatSize(int64(min(need, math.MaxInt64/2)))),
		Limit: limit.Name, Remedy: FewerFeatures}
}

// describePaths names the data's paths in a message: all of them, or the
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

// The collector. A memory limit is the runtime's soft memory limit
// ([SetMemoryLimit]): as the heap nears it, the collector runs more often,
// so a run that fits in the limit stays in it instead of growing past it by
// the collector's headroom. While the heap is far below the limit, the
// headroom (GOGC, the share of the live heap that may be garbage before the
// next collection) sets the peak: about live * (1 + GOGC/100).
//
// A reader of trajectory data holds the table, a few large pointer-free
// arrays the collector does not scan, for the whole run, and decodes row
// groups that become garbage at once. The runtime's default headroom, 100,
// lets that garbage grow to the size of the table; 15 keeps the peak near
// the table's size at about the same CPU time (docs/PERFORMANCE.md). So
// every read sets readingHeadroom (setReadingHeadroom), whatever the
// memory limit.
//
// A limit of 0 (none) leaves the runtime's default limit (none); GOGC and
// GOMEMLIMIT, when set in the environment, win.
const readingHeadroom = 15

// SetMemoryLimit makes limit bytes the runtime's soft memory limit, unless
// limit is 0 (no limit) or GOMEMLIMIT is set. It returns the limit in force
// afterwards.
func SetMemoryLimit(limit int64) int64 {
	if limit <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	debug.SetMemoryLimit(limit)
	return limit
}

// setReadingHeadroom sets the collector's headroom for a read of
// trajectory data: readingHeadroom, unless GOGC is set. It returns the
// headroom in force afterwards.
func setReadingHeadroom() int {
	if os.Getenv("GOGC") != "" {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	debug.SetGCPercent(readingHeadroom)
	return readingHeadroom
}
