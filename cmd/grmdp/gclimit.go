package main

import (
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// setMemoryLimit makes limit bytes (the --max-memory limit) the runtime's
// soft memory limit: as the heap nears it, the collector runs more often,
// so a run that fits in --max-memory stays in it instead of growing by the
// collector's headroom (GOGC) past it. A limit of 0 (no limit) leaves the
// runtime's default, and GOMEMLIMIT, when set in the environment, wins.
// It returns the limit in force afterwards.
func setMemoryLimit(limit int64) int64 {
	if limit <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	debug.SetMemoryLimit(limit)
	return limit
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
