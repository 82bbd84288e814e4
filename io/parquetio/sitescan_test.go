package parquetio_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// SiteTrajectories gives Read's sites, in Read's order, with Read's
// trajectory counts, for integer and text sites, from shuffled files.
func TestSiteTrajectories(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sites []any
	}{
		{"integer sites", anyInts(10, 2, 9)},
		{"text sites", anyStrings("h%v", 3, 1, 20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := stateOpts("s1", "s2")
			r := sampleRows(tc.sites, 7, 4, 3)
			perm := rand.New(rand.NewPCG(3, 4)).Perm(len(r.step))
			sh := r.permute(perm)
			dir := t.TempDir()
			siteT := i64
			if _, ok := tc.sites[0].(string); ok {
				siteT = str
			}
			n := len(sh.step)
			var paths []string
			for i, cut := range [][2]int{{0, n / 3}, {n / 3, n}} {
				p := filepath.Join(dir, "part-"+strconv.Itoa(i)+".parquet")
				writeParquet(t, p, 5, sh.slice(cut[0], cut[1]).columns(siteT, i64, i32, i32, f64, f64, "s1", "s2")...)
				paths = append(paths, p)
			}
			want, err := readChecked(t, paths, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{1, 3} {
				sites, counts, err := parquetio.SiteTrajectories(context.Background(), paths, traj.Options{Workers: w})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(sites, want.Sites) || !slices.Equal(counts, want.Trajectories) {
					t.Errorf("workers %d: sites %v with %v trajectories, want %v with %v", w, sites, counts, want.Sites, want.Trajectories)
				}
			}
		})
	}
}
