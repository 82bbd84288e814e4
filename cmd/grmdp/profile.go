package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/grmdp/grmdp/io/fileio"
)

// startProfiles starts a CPU profile and arranges a heap profile; the
// returned function stops and writes them.
func startProfiles(cpu, mem string) (func(), error) {
	for _, p := range []struct{ flag, path string }{{"cpuprofile", cpu}, {"memprofile", mem}} {
		if p.path != "" {
			if err := fileio.CheckOutput(p.path); err != nil {
				return nil, fmt.Errorf("--%s: %w", p.flag, err)
			}
		}
	}
	var cpuFile *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			return nil, usagef("--cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, usagef("--cpuprofile: %v", err)
		}
		cpuFile = f
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			cpuFile.Close()
		}
		if mem != "" {
			if f, err := os.Create(mem); err == nil {
				runtime.GC()
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}, nil
}
