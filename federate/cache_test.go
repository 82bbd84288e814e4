package federate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// TestRoundWindowSameMessage: a site's message formed from the statistics
// of the round's two steps only (the window RoundSteps names, read back
// from the site's cache) is the message formed from every step's
// statistics, bit for bit (the same checksum over every value), at every
// round of every method, for every map, with and without disclosure
// control. The job's rounds are folded from the full messages.
func TestRoundWindowSameMessage(t *testing.T) {
	ctx := context.Background()
	const H = 4
	for _, m := range maps() {
		names, chunks := siteChunks(m, 4, H, []int{60, 45, 80, 30}, true, 23)
		for _, dc := range []solve.Disclosure{{}, {MinCount: 5, MinRows: 10}} {
			var full []SiteInput
			var tables []*traj.Table
			var keys []CacheKey
			dir := t.TempDir()
			for k, c := range chunks {
				tb := buildTable(t, m, H, c)
				st, err := solve.NewStatsDisclosed(ctx, tb, m, m.Blocks(), 1, dc)
				if err != nil {
					t.Fatal(err)
				}
				full = append(full, SiteInput{Stats: st, Site: names[k], Numeric: true})
				tables = append(tables, tb)
				data := filepath.Join(dir, names[k]+".parquet")
				os.WriteFile(data, []byte("rows of "+names[k]), 0o600)
				key, err := NewCacheKey("test", names[k], []string{data})
				if err != nil {
					t.Fatal(err)
				}
				if err := WriteCache(filepath.Join(dir, names[k]), key, tb); err != nil {
					t.Fatal(err)
				}
				keys = append(keys, key)
			}
			for _, method := range []solve.Method{solve.Sitewise, solve.PEVIMin, solve.Behaviour} {
				j := testJob(method, m, H, names, dc)
				s := NewState(j)
				for !s.Done(j) {
					lo, hi := RoundSteps(j, s.Round)
					var in []Incoming
					for k, site := range full {
						want, err := SiteMessage(ctx, j, s, site)
						if err != nil {
							t.Fatal(err)
						}
						win, _, err := ReadCache(filepath.Join(dir, names[k]), keys[k], lo, hi)
						if err != nil {
							t.Fatal(err)
						}
						if !reflect.DeepEqual(win, tables[k].Window(lo, hi)) {
							t.Fatalf("%s: the cache's steps %d..%d differ from the table's", m.Kind, lo, hi)
						}
						st, err := solve.NewStatsDisclosed(ctx, win, m, m.Blocks(), 1, dc)
						if err != nil {
							t.Fatal(err)
						}
						got, err := SiteMessage(ctx, j, s, SiteInput{Stats: st, Site: names[k], Numeric: true})
						if err != nil {
							t.Fatal(err)
						}
						if got.Checksum != want.Checksum {
							t.Fatalf("%s %s %+v round %d site %s: the window's message differs:\n%+v\nwant %+v", m.Kind, method, dc, s.Round, names[k], got, want)
						}
						in = append(in, Incoming{File: names[k], Msg: want})
					}
					next, err := Fold(ctx, j, s, in)
					if err != nil {
						t.Fatal(err)
					}
					s = next
				}
			}
		}
	}
}

// TestCacheKeyAndDamage: a cache is used only under its own key (job,
// site, and every data file's path, size, modification time and
// content), is private to its owner, and a damaged cache is a miss, never
// wrong rows.
func TestCacheKeyAndDamage(t *testing.T) {
	m := maps()[1]
	names, chunks := siteChunks(m, 1, 3, []int{40}, true, 5)
	tb := buildTable(t, m, 3, chunks...)
	dir := t.TempDir()
	data := filepath.Join(dir, "data.parquet")
	os.WriteFile(data, []byte("0123456789"), 0o600)
	key, err := NewCacheKey("job-1", names[0], []string{data})
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	if err := WriteCache(cache, key, tb); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(cache, CacheFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file mode %v (%v), want 0600", fi.Mode(), err)
	}
	if _, _, err := ReadCache(cache, key, 1, 2); err != nil {
		t.Fatalf("own key: %v", err)
	}
	miss := func(what string, k CacheKey) {
		t.Helper()
		if _, _, err := ReadCache(cache, k, 1, 2); !errors.Is(err, ErrCacheMiss) {
			t.Fatalf("%s: %v, want a cache miss", what, err)
		}
	}
	other := key
	other.JobID = "job-2"
	miss("another job", other)
	other = key
	other.Site = "elsewhere"
	miss("another site", other)
	// The same size, another content: only the checksum tells.
	os.WriteFile(data, []byte("0123456780"), 0o600)
	k2, _ := NewCacheKey("job-1", names[0], []string{data})
	miss("changed content", k2)
	// The same content, touched.
	os.WriteFile(data, []byte("0123456789"), 0o600)
	os.Chtimes(data, time.Now(), time.Now().Add(time.Hour))
	k3, _ := NewCacheKey("job-1", names[0], []string{data})
	if k3.Files[0].SHA256 != key.Files[0].SHA256 {
		t.Fatal("the same content has another checksum")
	}
	miss("touched", k3)
	extra := filepath.Join(dir, "more.parquet")
	os.WriteFile(extra, nil, 0o600)
	k4, _ := NewCacheKey("job-1", names[0], []string{data, extra})
	miss("a file added", k4)
	// A flipped byte in step 2's rows: a miss, not other rows.
	b, _ := os.ReadFile(filepath.Join(cache, CacheFile))
	b[len(b)-1] ^= 1
	os.WriteFile(filepath.Join(cache, CacheFile), b, 0o600)
	if _, _, err := ReadCache(cache, key, 1, 1); err != nil {
		t.Fatalf("step 1 is intact: %v", err)
	}
	if _, _, err := ReadCache(cache, key, 2, 3); !errors.Is(err, ErrCacheMiss) {
		t.Fatalf("damaged step 3: %v, want a cache miss", err)
	}
	os.WriteFile(filepath.Join(cache, CacheFile), b[:len(b)/2], 0o600)
	miss("truncated", key)
	if _, _, err := ReadCache(filepath.Join(dir, "none"), key, 1, 2); !errors.Is(err, ErrCacheMiss) {
		t.Fatalf("no cache: %v", err)
	}
}

// TestRoundSteps: round r reads steps h = H - r and h+1 (h alone at H); a
// round outside the backward pass reads every step.
func TestRoundSteps(t *testing.T) {
	j := &Job{H: 5}
	for _, c := range []struct{ r, lo, hi int }{{0, 5, 5}, {1, 4, 5}, {4, 1, 2}, {5, 1, 5}, {-1, 1, 5}} {
		if lo, hi := RoundSteps(j, c.r); lo != c.lo || hi != c.hi {
			t.Errorf("round %d: steps %d..%d, want %d..%d", c.r, lo, hi, c.lo, c.hi)
		}
	}
}
