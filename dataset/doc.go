// Package dataset is one handle on trajectory data: [Open] reads the data
// once, under [Options] (paths, column names, feature map, NULL and step
// rules, memory limit, workers), and the handle offers what grmdp does to
// data: solve one method ([Data.Solve]) or every method on the same rows
// ([Data.SolveAll], and with their shared evaluation and files
// [Data.Compare]), evaluate a policy ([Data.Evaluate], [Data.Delta]),
// cross-fit a method ([Data.Validate]), choose its settings out of sample
// ([Data.Select], [Data.SolveSelected]) and score methods by the same
// held-out rule ([Data.HeldOut], [Data.HeldOutMethods]),
// summarise the data ([Data.Inspect]); [Apply] annotates the rows with a
// policy's recommendations, [SiteMessage] computes a federated site's
// message for its job's round ([OpenSite] opens the round from the job's
// directory, [OpenVantage6] from a vantage6 node's environment), which
// [WriteMessage] writes and [ReadMessage] reads back, and
// [WriteSimulation] writes a simulation model's data.
//
// # The coordinator of a federated job
//
// [StepJob] folds a round's messages into a job's directory and, after
// the last round, writes the policy and its summary; [OpenEvaluation]
// opens the evaluation of a policy on a finished job, whose rounds the
// sites answer with [SiteMessage] and StepJob folds, and
// [ReadEvaluation] reads it back. Each result prints itself with
// WriteText.
//
// # In memory or out of core
//
// Open holds the rows in memory and forms the per-(site, step)
// statistics, unless [Options.OutOfCore] asks otherwise or the data would
// not fit in [Options.MaxMemory] (estimated from the Parquet footers); it
// then surveys them, validating every row once, and the solves read one
// pair of adjacent steps at a time. The results are the same bits either
// way. The methods that need every row at once (evaluation, inspection)
// return an error wrapping [ErrInMemory] out of core; [Options.InMemory]
// keeps the data in memory.
//
// # Results
//
// Every result marshals itself as the JSON the command line prints with
// --json ([SolveReport], [Comparison]'s JSON, [Validation], [Inspection],
// [ApplySummary], [PolicyView]) and prints itself as tables for a person
// with WriteText; [CPath] prints a penalty path.
//
// # Errors
//
// Errors say what is wrong in the library's terms: [OptionError] names
// the setting of [Options] that cannot be met, [ErrTooLarge] marks data
// beyond the memory limit, [ErrBadInput] data that do not fit what was
// asked of them; the reader's errors (package parquetio) pass through.
// Notes that do not stop the run go to [Options.Note].
package dataset
