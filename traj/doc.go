// Package traj holds grmdp's trajectory table in memory and the Builder
// that validates rows into it. It knows no file format: io/parquetio scans
// Parquet into it and writes Parquet out of it, the simulators (package
// sim) sample into it, and solve, eval and the feature maps read it.
//
// # The table
//
// A [Table] holds the rows of one or more sites' trajectories organised for
// the backward recursion: Steps[h-1] ([Step]) holds the rows at step h,
// sorted by site (in [Table.Sites] order) and then trajectory key, each row
// with its action, reward, state (W floats) and the index of the same
// trajectory's row at step h+1 (Next, -1 when the episode ended).
// Trajectories are numbered 0.. in (site, key) order, so that a
// trajectory's ordinal is its row's index at step 1.
//
// # Building a table
//
// A [Builder] takes rows in batches ([Chunk]), each located in its source
// ([Origin]: file, row group, row) for messages, and checks every value:
// steps from 1 (up to the horizon when one is fixed), actions in 0..A-1 or
// labels, finite rewards in [0,1], and states as the [StateSpec] requires.
// [Builder.Build] then sorts and links the rows and reports duplicate
// (site, traj, step) rows and gaps inside an episode. Sites, trajectory ids
// and actions may be integers or strings, but each the same kind in every
// chunk; site and action labels get a canonical order (numeric for integer
// sites, lexical otherwise), so the Table does not depend on the order in
// which rows or chunks arrive. Error messages do, so chunks are added in a
// fixed order (by file, then row group).
//
// Errors about data are [*RowError] values naming the file, row group, row
// (0-based within the file) and column, each only where it applies, and
// wrapping [ErrBadData] (a gap also [ErrGap]), [ErrSchema] (chunks whose
// kinds disagree) or [ErrNoData]:
//
//	data.parquet: row group 2, row 9: column "reward": reward 1.5 is outside [0,1]: rescale rewards to [0,1] before solving
//
// A reader of large inputs that checks the rows itself, and can place them
// in presized arrays in parallel, hands them by column to [NewTable]
// ([Rows]), which builds the Table as Build does and, for states the
// reader writes afterwards, gives each row's place in it. A survey
// validates every row without keeping any ([NewSurveyBuilder], [Summary]),
// after which windows of steps are built one at a time with the whole
// input's numbering ([NewWindowBuilder]).
package traj
