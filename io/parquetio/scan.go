package parquetio

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// Scan decodes the contract's columns of paths with the same parallel
// decode path as [Read] and discards them: no validation, no Builder, no
// Table; each worker decodes into buffers reused from row group to row
// group. It returns the number of rows. It is the floor every solve is
// measured against (see docs/PERFORMANCE.md).
func Scan(ctx context.Context, paths []string, opts traj.Options) (int64, error) {
	cols := opts.Columns.WithDefaults()
	infos, hiveInt, err := openInputs(ctx, paths, &opts, cols)
	if err != nil {
		return 0, err
	}
	tasks := planRowGroups(infos)
	props := readerProps(memory.DefaultAllocator)
	w := workers.Or(opts.Workers)
	// Each row group is decoded into arrays a previous one used: the
	// floor reuses its buffers.
	var mu sync.Mutex
	var free []*rowDst
	var rows int64
	err = ordered(ctx, w, len(tasks),
		func(ctx context.Context, i int) (*traj.Chunk, error) {
			into := &rowDst{}
			mu.Lock()
			if k := len(free); k > 0 {
				into, free = free[k-1], free[:k-1]
			}
			mu.Unlock()
			return decodeTask(ctx, tasks[i], props, hiveInt, false, into)
		},
		func(i int, ch *traj.Chunk) error {
			rows += int64(ch.Len())
			mu.Lock()
			free = append(free, &rowDst{site: ch.SiteInt, traj: ch.TrajInt, step: ch.Step, action: ch.ActionInt, reward: ch.Reward, state: ch.State})
			mu.Unlock()
			return nil
		}, nil)
	return rows, err
}
