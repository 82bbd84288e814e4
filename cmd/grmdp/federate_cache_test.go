//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/federate"
)

// TestFederateSiteCache: federate site --cache writes, at every round, the
// very bytes federate site writes without it (the first round builds the
// cache, the later ones read their two steps from it); when a data file
// is replaced, the next round's message is that of the new data, not of
// the cached rows.
func TestFederateSiteCache(t *testing.T) {
	dir := t.TempDir()
	names, dirs := fedSetup(t, dir)
	job := filepath.Join(dir, "job")
	mustRun(t, append([]string{"federate", "init", "--sites", strings.Join(names, ","), "-o", job}, settingsArgs("sitewise", 5, 10)...)...)
	caches := make([]string, len(names))
	for k := range names {
		caches[k] = filepath.Join(dir, "cache-"+names[k])
	}
	site := func(k int, out string, cache bool) []byte {
		t.Helper()
		args := []string{"federate", "site", "--job", job, "--site", names[k], "-o", out}
		if cache {
			args = append(args, "--cache", caches[k])
		}
		mustRun(t, append(args, dirs[k])...)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for r := 0; r < 4; r++ {
		var msgs []string
		for k := range names {
			plain := filepath.Join(dir, fmt.Sprintf("r%d-%d.parquet", r, k))
			want := site(k, plain, false)
			got := site(k, filepath.Join(dir, fmt.Sprintf("r%d-%d-cached.parquet", r, k)), true)
			if !bytes.Equal(got, want) {
				t.Fatalf("round %d, site %s: the cached round's message differs", r, names[k])
			}
			msgs = append(msgs, plain)
		}
		if _, err := os.Stat(filepath.Join(caches[0], federate.CacheFile)); err != nil {
			t.Fatalf("round %d: no cache: %v", r, err)
		}
		mustRun(t, append([]string{"federate", "step", "--job", job}, msgs...)...)
	}
	// Another data set with the same sites: site 0's file is replaced.
	other := t.TempDir()
	_, _, odirs := simulateSplit(t, other, "--scenario", "benchmark", "--seed", "6", "--trajectories", "150,90,40")
	stale := site(0, filepath.Join(dir, "stale.parquet"), true)
	b, err := os.ReadFile(filepath.Join(odirs[0], "data.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirs[0], "data.parquet"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	want := site(0, filepath.Join(dir, "new.parquet"), false)
	got := site(0, filepath.Join(dir, "new-cached.parquet"), true)
	if bytes.Equal(want, stale) {
		t.Fatal("the new data give the old message: the case tests nothing")
	}
	if !bytes.Equal(got, want) {
		t.Fatal("after the data changed, the cached site sent another message than the data's")
	}
}
