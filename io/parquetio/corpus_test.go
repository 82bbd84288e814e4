package parquetio_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// corpusDir is apache/parquet-testing, checked out beside the repository
// (shared/testdata/parquet-testing; see its INDEX.md).
const corpusDir = "../../../shared/testdata/parquet-testing"

// TestCorpus reads every file of the parquet-testing corpus with the
// default contract. None of them is a trajectory table, so each must end in
// a clean error (a schema or Parquet error) within a time limit: never a
// panic, a hang or a table.
func TestCorpus(t *testing.T) {
	var files []string
	for _, sub := range []string{"data", "bad_data"} {
		m, _ := filepath.Glob(filepath.Join(corpusDir, sub, "*.parquet"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skipf("no parquet-testing corpus at %s", corpusDir)
	}
	for _, path := range files {
		name := filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			for _, opts := range []traj.Options{
				{},
				{State: traj.StateSpec{Columns: []string{"phi"}, List: true}},
			} {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				type result struct {
					tb  *traj.Table
					err error
				}
				done := make(chan result, 1)
				go func() {
					tb, err := parquetio.Read(ctx, []string{path}, opts)
					done <- result{tb, err}
				}()
				var res result
				select {
				case res = <-done:
				case <-time.After(30 * time.Second):
					t.Fatalf("read did not return within 30s")
				}
				cancel()
				if res.err == nil {
					t.Fatalf("got a table with %d rows, want an error", res.tb.Rows)
				}
				if !errors.Is(res.err, parquetio.ErrSchema) && !errors.Is(res.err, parquetio.ErrParquet) && !errors.Is(res.err, parquetio.ErrBadData) {
					t.Errorf("error %q wraps none of ErrSchema, ErrParquet, ErrBadData", res.err)
				}
				if !strings.Contains(res.err.Error(), path) {
					t.Errorf("error %q does not name the file", res.err)
				}
				if testing.Verbose() {
					t.Log(res.err)
				}
			}
		})
	}
	_ = os.Stdout
}
