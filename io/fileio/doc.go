// Package fileio writes output files atomically.
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
//  1. The directory must exist: the package never creates directories, and a
//     missing one is reported by name. An existing destination must be a
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
// # Errors
//
// Messages are lowercase, start with "fileio: " and name the destination
// path (and the directory, when that is the problem). Errors from the
// operating system are wrapped, so [errors.Is] with [io/fs.ErrNotExist] or
// [io/fs.ErrPermission] works. A destination that cannot be written as asked
// (its directory missing, or the path naming something other than a regular
// file) is also an [ErrOutputPath].
package fileio
