package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// siteData reads a site's data for the job's current round. Every row is
// read and validated as solve reads them (the message's totals and
// provenance are the whole data's), but the statistics are formed only
// for the two steps the round needs (federate.RoundSteps): the step's
// Grams, counts and behaviour counts, and the rows behind its right-hand
// side. With cacheDir set, the site's rows are kept there after the first
// read (federate.WriteCache) and a later round of the same job reads only
// its two steps from it, as long as no data file changed
// (federate.ReadCache); the message is the same bits either way.
func siteData(ctx context.Context, o dataOptions, paths []string, j *federate.Job, s *federate.State, site, cacheDir string, stderr io.Writer) (*dataset, error) {
	if s.Done(j) {
		return loadData(ctx, o, paths, stderr)
	}
	lo, hi := federate.RoundSteps(j, s.Round)
	o.window = func(t *traj.Table) *traj.Table { return t.Window(lo, hi) }
	if cacheDir == "" || !rowFreeMap(o) {
		return loadData(ctx, o, paths, stderr)
	}
	var files []string
	for _, p := range paths {
		files = append(files, expandArg(p)...)
	}
	if len(files) == 0 {
		return loadData(ctx, o, paths, stderr) // its error names the missing data
	}
	key, err := federate.NewCacheKey(j.ID, site, files)
	if err != nil {
		return nil, fmt.Errorf("--cache: %w", err)
	}
	t, err := federate.ReadCache(cacheDir, key, lo, hi)
	switch {
	case err == nil:
		return cachedData(ctx, o, t)
	case !errors.Is(err, federate.ErrCacheMiss):
		return nil, fmt.Errorf("--cache %s: %w", cacheDir, err)
	}
	ds, err := loadData(ctx, o, paths, stderr)
	if err != nil {
		return nil, err
	}
	if err := federate.WriteCache(cacheDir, key, ds.Table); err != nil {
		return nil, fmt.Errorf("--cache %s: %w", cacheDir, err)
	}
	return ds, nil
}

// cachedData completes a round's dataset from the rows of its steps read
// from the site's cache, as loadData completes it from the Parquet.
func cachedData(ctx context.Context, o dataOptions, t *traj.Table) (*dataset, error) {
	m, err := mapFor(o, t)
	if err != nil {
		return nil, err
	}
	st, err := solve.NewStatsDisclosed(ctx, t, m, solve.BlocksFor(t, &m), o.Workers, o.Disclosure)
	if err != nil {
		return nil, err
	}
	return &dataset{Table: t, Map: m, Stats: st}, nil
}

// rowFreeMap reports whether o's feature map is fixed without the rows
// (mapFor and BlocksFor read none of them), so that two steps of rows
// give the map every step would.
func rowFreeMap(o dataOptions) bool {
	switch o.Kind {
	case features.Tabular:
		return o.NumStates > 0
	case features.Indicator, features.ActionBlock:
		return true
	case features.Binned, features.SoftBinned:
		return !quantileBins(o.Bins)
	}
	return false
}

// runCaches are the site caches of a federate run: one temporary
// directory per site under one root, removed when the run ends; none
// with --no-cache.
type runCaches struct {
	root string
	dirs []string
}

func siteCaches(sites []string, none bool) (*runCaches, error) {
	if none {
		return &runCaches{}, nil
	}
	root, err := os.MkdirTemp("", "grmdp-site-cache-")
	if err != nil {
		return nil, fmt.Errorf("federate run: a temporary directory for the site caches: %w", err)
	}
	rc := &runCaches{root: root}
	for i := range sites {
		rc.dirs = append(rc.dirs, filepath.Join(root, fmt.Sprintf("site-%03d", i)))
	}
	return rc, nil
}

// flags returns site i's --cache flag, or none.
func (rc *runCaches) flags(i int) []string {
	if rc.root == "" {
		return nil
	}
	return []string{"--cache", rc.dirs[i]}
}

func (rc *runCaches) remove() {
	if rc.root != "" {
		os.RemoveAll(rc.root)
	}
}
