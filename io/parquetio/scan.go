package parquetio

import (
	"context"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Scan decodes the contract's columns of paths with the same parallel
// decode path as [Read] and discards them: no validation, no Builder, no
// Table. It returns the number of rows. It is the floor every solve is
// measured against (see docs/PERFORMANCE.md).
func Scan(ctx context.Context, paths []string, opts Options) (int64, error) {
	cols := opts.Columns.withDefaults()
	infos, hiveInt, err := openInputs(ctx, paths, &opts, cols)
	if err != nil {
		return 0, err
	}
	tasks := planRowGroups(infos)
	props := readerProps(memory.DefaultAllocator)
	w := opts.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	var rows int64
	err = ordered(ctx, w, len(tasks),
		func(ctx context.Context, i int) (*Chunk, error) {
			return decodeTask(ctx, tasks[i], props, hiveInt, false, nil)
		},
		func(i int, ch *Chunk) error { rows += int64(ch.Len()); return nil }, nil)
	return rows, err
}
