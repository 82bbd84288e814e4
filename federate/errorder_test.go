package federate

import (
	"context"
	"runtime"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// A round whose Lambda is singular at several groups fails with the first
// group's error whatever the coordinator's cores, run after run.
func TestFoldErrorAnyWorkers(t *testing.T) {
	ctx := context.Background()
	const H = 3
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 3, StateColumns: []string{"s1", "s2", "s3"}}
	names, chunks := siteChunks(m, 4, H, []int{2, 2, 2, 2}, false, 17)
	sites := siteInputs(t, m, H, names, chunks, solve.Disclosure{})
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, method := range []solve.Method{solve.Sitewise, solve.PEVIAvg} {
		j := testJob(method, m, H, names, solve.Disclosure{})
		j.Lambda = 1e-300
		s := NewState(j)
		var in []Incoming
		for _, site := range sites {
			msg, err := SiteMessage(ctx, j, s, site)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, Incoming{File: site.Site, Msg: msg})
		}
		var want string
		for _, procs := range []int{1, 4} {
			runtime.GOMAXPROCS(procs)
			for run := 0; run < 20; run++ {
				_, err := Fold(ctx, j, s, in)
				if err == nil {
					t.Fatalf("%s: no error", method)
				}
				if want == "" {
					want = err.Error()
				} else if err.Error() != want {
					t.Fatalf("%s, %d cores, run %d: %q, want %q", method, procs, run, err, want)
				}
			}
		}
	}
}
