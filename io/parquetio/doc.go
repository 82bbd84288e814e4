// Package parquetio is grmdp's Parquet format layer: it scans the
// trajectory contract from Parquet files into the in-memory table of
// package traj and writes Parquet out of it, and writes and reads the rows
// of policy artifacts. Arrow and Parquet types never leave it: the exported
// API speaks in [traj.Table], [traj.Chunk], [PolicyRow] and plain Go
// values, and only this package imports arrow-go.
//
// # The trajectory contract
//
// The input is long format, one row per (site, trajectory, step), in one or
// more Parquet files. Column names are configurable ([traj.Options].Columns);
// the defaults and the accepted Parquet types are:
//
//	site    any integer type, or string (also large_string, dictionary, enum)
//	traj    any integer type, or string
//	step    any integer type, values 1..H (or 0..H-1, see below)
//	action  any integer type (0..A-1), or string (labels, sorted)
//	reward  any integer or floating-point type, values in [0,1]
//	state   [traj.StateSpec].Columns: numeric columns, one per state value, or
//	        with StateSpec.List one list<float|double> column (list,
//	        large_list or fixed_size_list; DuckDB's DOUBLE[k] is a list)
//	        whose rows all have the same length W
//
// DECIMAL columns (stored as INT32, INT64, FIXED_LEN_BYTE_ARRAY or
// BYTE_ARRAY, as SQL and SAS exports and DuckDB write them) are numbers:
// each value is unscaled / 10^scale rounded to the nearest float64 (1.10
// reads as 1.1). Where an integer is wanted (site, traj, step, action) a
// DECIMAL must hold whole numbers; another value is an error naming its row.
//
// Steps numbered from 0 are read as 1..H with [traj.Options].FirstStep =
// [traj.StepsFrom0], or with [traj.StepsDetect] when the smallest step is 0
// (from the footers' statistics where they have them, else from the step
// column; [traj.Table].ZeroStepFile then names the file): every step is
// shifted by exactly 1.
//
// Columns may be nullable (DuckDB writes every column as optional); a null
// in one of them is an error, unless [traj.Options].Nulls says otherwise
// for the action, reward and state columns: [traj.NullsTruncate] ends the
// episode before its first row with a null (the rows after it go too, so
// no gap is left), [traj.NullsDropEpisode] drops the episode, and
// [traj.Table].Nulls counts what went, per site (see [traj.DropMissing]).
// A null in the site, traj or step column, or in a list state, stays an
// error. Under a null policy Read decodes the input twice (the first pass
// finds each episode's first NULL) in the memory of one read; [Survey]
// (out of core) refuses one. Other columns
// are ignored, and only the contract's columns are decoded. Unsigned
// integers above 2^63-1 are errors.
// Rows may come in any order and across files; [traj.Builder] checks each
// value (finite rewards in [0,1], steps from 1, no duplicate rows, no gaps
// inside an episode, states as the [traj.StateSpec] requires) and sorts and
// links the rows into a [traj.Table].
//
// # Inputs
//
// [Read] and [Annotate] take files, directories and glob patterns. A
// directory stands for the *.parquet files below it, recursively, in
// lexical order of their paths; names starting with "." or "_" (Spark's
// _SUCCESS, .crc files) are skipped. A glob's matches are read in lexical
// order. A file named twice is read once. Hive-style folders work: when a
// file has no site column and a folder on its path is named <site>=X (X
// URL-unescaped), every row of the file has site X, an integer when every
// such X is a decimal integer and a string otherwise.
//
// Every file is opened read-only. Footers are read first (in parallel);
// then every file's schema is checked, in order, before any data is
// decoded. A file's fingerprint ([traj.Source].Fingerprint) is the hex
// SHA-256 of its size in decimal followed by its serialized footer (the bytes before
// the final 8-byte length and magic): it changes whenever the content does,
// and costs no full read.
//
// # Decoding
//
// Row groups are decoded in parallel ([traj.Options].Workers goroutines,
// default GOMAXPROCS) with arrow-go's typed column chunk readers, reading only the
// contract's columns through a bounded buffer per column, at most two row
// groups per worker in flight. When the footers' row counts can be trusted
// and the input has state columns (or a list), Read makes two passes
// (without state columns, it places the rows in one). The first decodes
// every column but the state's; each worker checks its row group's values
// and writes them at the row group's place in presized arrays, and only
// site ids, string labels and the choice of the error to report run
// serially, in (file, row group) order. [traj.NewTable] then sorts and
// links the rows, and the second pass decodes the state columns (several
// double columns in lockstep batches of rows), checks them and writes each
// row's state straight to its place in the Table, so that the states are
// never held twice; until then the Table's state memory holds the rows'
// rewards. The large arrays are advised for transparent huge pages on
// Linux (internal/hugepage). Before and after the second pass Read checks
// that no file changed (size and modification time): a file that did is
// an error wrapping [ErrBadData] ("the file changed while it was read").
// Otherwise chunks are added to a [traj.Builder] serially
// in (file, row group) order as they are ready. Either way the error
// reported for bad input is the same, whatever the number of workers: the
// first row group's with an error, within it a decode error before a bad
// value, and the columns in the order site, traj, step, action, reward,
// state; a duplicate or a gap only when no row group has an error. Read
// returns the context's error when it is cancelled, and reports rows to
// [traj.Options].Progress as they are added; with two passes every row is
// reported twice, once per pass, against a total of twice the rows.
//
// arrow-go panics on some valid and some corrupt files; every call into it
// runs under recover, and a panic becomes an error wrapping [ErrParquet]
// that names the file.
//
// # Errors
//
// Every error about the input wraps one of the sentinels, so callers pick
// exit codes with [errors.Is] (all but ErrParquet are the traj package's
// values, which the Builder's errors wrap):
//
//	ErrParquet  the file is not readable Parquet: empty, truncated, not
//	            Parquet, encrypted, corrupt pages, unsupported codec
//	ErrSchema   a contract column is missing or has a type the contract
//	            does not accept, or the files disagree on a column's type
//	ErrBadData  a value breaks the contract: a null, NaN, a reward
//	            outside [0,1], a gap, a duplicate row, ...; a gap's
//	            error also wraps ErrGap
//	ErrNoData   a directory or glob without Parquet files, or no rows
//
// Errors about data are [*traj.RowError] values naming the file, row group,
// row (0-based within the file) and column, each only where it applies:
//
//	data.parquet: row group 2, row 9: column "reward": reward 1.5 is outside [0,1]: rescale rewards to [0,1] before solving
//	data.parquet: column "step": has type double, want an integer column
//	data.parquet: column "site": missing: the file has columns [hospital traj step action reward]
//	notes.parquet: is not a parquet file: it does not start with the PAR1 magic bytes
//
// Operating-system errors read "path: cannot read: cause" and wrap the
// cause (so errors.Is(err, fs.ErrNotExist) works). Errors that are not
// about one input file start with "parquetio: ". Messages are lowercase
// and end without punctuation.
//
// # Outputs
//
// [WriteTrajectories] writes a Table in the contract, [WritePolicy] writes
// the policy artifact and [Annotate] writes the input rows with
// recommendations. All outputs go through [fileio.CreateAtomic]: a
// temporary file beside the destination, renamed into place only when
// complete, so a failed run leaves nothing behind and never touches its
// inputs. Files are snappy-compressed, dictionary-encode only the site,
// step and action columns (a dictionary that overflows its page would make
// arrow-go's footer differ from run to run) and carry no timestamps, so
// equal inputs give byte-identical files; DuckDB, pandas and Polars read
// them. [WriteChunks] writes rows in any order or split across
// files ([traj.Table.Chunk] and [traj.Chunk.Select] give a table's rows as
// a Chunk),
// one row group per chunk or more; [WriteChunksSeq] writes the same file
// from chunks made one at a time. `grmdp prepare` writes one chunk per step
// ([traj.Table.StepChunk]) to align row groups to steps, from Read's Table or,
// out of core, from windows of [Plan.ReadSteps].
//
// # Footers only
//
// [CountRows] and [Measure] read only the footers (row and value counts,
// for memory estimates), [PrefixedColumns] the schema (the default state
// columns s1..sp), and [CheckActions] validates an action column against
// a policy's actions. [Scan] decodes the contract's columns with Read's
// decode path and discards them: the floor of docs/PERFORMANCE.md.
package parquetio
