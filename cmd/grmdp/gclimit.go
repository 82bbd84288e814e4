package main

import (
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// The collector. --max-memory is the runtime's soft memory limit
// (setMemoryLimit): as the heap nears it, the collector runs more often, so
// a run that fits in --max-memory stays in it instead of growing past it by
// the collector's headroom. While the heap is far below the limit, the
// headroom (GOGC, the share of the live heap that may be garbage before the
// next collection) sets the peak: about live * (1 + GOGC/100).
//
// A command that reads trajectory data holds the table, a few large
// pointer-free arrays the collector does not scan, for the whole run, and
// decodes row groups that become garbage at once. The runtime's default
// headroom, 100, lets that garbage grow to the size of the table. Measured
// on 10M transitions (action-block, W = 3; peak RSS, medians of 5 runs)
// against a finalizer-driven controller that set GOGC after every
// collection from the heap's scannable share: solve 775 MiB at GOGC=100,
// 616 at 15, 585 with the controller; compare 786, 651 at 20, 637 at 15,
// 588 with the controller; with string ids (millions of strings the
// collector scans) solve 773 MiB at 15 against 841, CPU time 1.01x. So the
// readers (loadData, surveyPlan, apply) set readingHeadroom
// (setReadingHeadroom), whatever --max-memory says.
//
// --max-memory 0 (no limit) leaves the runtime's default limit (none);
// GOGC and GOMEMLIMIT, when set in the environment, win.
const readingHeadroom = 15

// setMemoryLimit makes limit bytes the runtime's soft memory limit, unless
// limit is 0 (no limit) or GOMEMLIMIT is set. It returns the limit in force
// afterwards.
func setMemoryLimit(limit int64) int64 {
	if limit <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	debug.SetMemoryLimit(limit)
	return limit
}

// setReadingHeadroom sets the collector's headroom for a command about to
// read trajectory data: readingHeadroom, unless GOGC is set. It returns the
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

// applyMaxMemory sets the soft memory limit from a command's --max-memory
// (commands without the flag keep the runtime's default). A value that does
// not parse is left to the command, which reports it where it reads it.
func applyMaxMemory(c *cli.Context) {
	if !hasFlag(c.Command, "max-memory") {
		return
	}
	if l, err := memoryLimit(c); err == nil {
		setMemoryLimit(l.bytes)
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
