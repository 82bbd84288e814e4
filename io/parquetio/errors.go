package parquetio

import (
	"errors"

	"github.com/grmdp/grmdp/traj"
)

// Sentinel errors. Every error this package returns for bad input wraps one
// of them, so callers choose exit codes with errors.Is. All but ErrParquet
// are the trajectory package's: the same values, so that errors.Is matches
// either name.
var (
	// ErrBadData marks a value that breaks the trajectory contract.
	ErrBadData = traj.ErrBadData
	// ErrSchema marks a missing or mistyped column, or files whose schemas
	// disagree.
	ErrSchema = traj.ErrSchema
	// ErrNoData marks an input with no Parquet files or no rows.
	ErrNoData = traj.ErrNoData
	// ErrParquet marks a file that is not readable Parquet.
	ErrParquet = errors.New("unreadable parquet")
	// ErrGap marks a gap inside an episode (see [traj.ErrGap]). It wraps
	// ErrBadData.
	ErrGap = traj.ErrGap
)
