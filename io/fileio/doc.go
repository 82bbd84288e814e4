// Package fileio writes output files atomically and checks a run's
// outputs before its work.
//
// Every artifact grmdp writes (policies, annotated data, simulated data,
// reports) goes through [CreateAtomic] or [WriteAtomic], so a failed or
// interrupted run never leaves a partial file behind and never replaces an
// existing file with a broken one.
//
// # Protocol
//
// For a destination path dir/name:
//
//  1. The directory must exist: [CreateAtomic] never creates directories
//     ([Dirs] does, for a run), and a missing one is reported by name. An existing destination must be a
//     regular file: a directory, a device, a FIFO or a socket is refused,
//     since the rename would replace it.
//  2. The data is written to a temporary file in dir whose name embeds the
//     final name (".name.tmp-*"), so a rename never crosses file systems and a
//     leftover temporary file says what it was for.
//  3. [File.Commit] syncs the temporary file, closes it, renames it over
//     dir/name and syncs the directory, so the rename itself is durable.
//  4. On any error before the rename, and on [File.Abort], the temporary
//     file is closed and removed.
//
// # A run's outputs
//
// Before its work, a run checks every output ([CheckPlanned]) and that no
// output file is one of its inputs ([CheckNotInputs]). [Dirs] creates the
// directories the outputs need and removes those it created, when empty,
// if the run fails.
//
// # Errors
//
// Messages are lowercase, start with "fileio: " and name the destination
// path (and the directory, when that is the problem); those about a run's
// outputs ([Dirs], [CheckNotInputs]) name the paths as the caller names
// them, without the prefix. Errors from the operating system are wrapped,
// so [errors.Is] with [io/fs.ErrNotExist] or [io/fs.ErrPermission] works.
// An output that cannot be written as asked (its directory missing or not
// a directory, the path naming something other than a regular file, or
// one of the run's inputs) is also an [ErrOutputPath].
package fileio
