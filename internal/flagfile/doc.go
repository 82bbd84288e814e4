// Package flagfile sets the flags of a [github.com/urfave/cli/v3] command
// from a YAML file, so that a batch job is one reviewed file that can
// serve every command of a program.
//
// # The file
//
// The file is a YAML mapping of flag names (any of a flag's names) to
// values:
//
//	state: [s1, s2, s3]
//	features: binned
//	bins:
//	  s1: [0.3, 0.6]
//	  s2: q3
//	solve:
//	  output: policy.parquet
//	federate init:
//	  min-sites: 3
//
// [File.Apply] gives a command its settings by these rules:
//
//   - The top level applies to every command.
//   - A section named after a command as on the command line, subcommands
//     included ("solve", "federate init"), overrides the top level for
//     that command. Every section, the command's or another's, must be a
//     mapping of settings its command has.
//   - A flag given on the command line wins over the file.
//   - A setting that only other commands have is not an error: it is
//     returned in [Result.Ignored], for the program to note.
//   - A setting that no command has is an error, as is a value its flag
//     cannot take. Hidden flags cannot be set.
//   - A list-valued flag ([cli.StringSliceFlag]) takes a value, a YAML
//     list, or a YAML mapping whose entries become KEY:v1,v2 items in the
//     file's order (bins above gives s1:0.3,0.6 and s2:q3). A string
//     flag given a list takes it as one comma-separated value, written by
//     [JoinList] so that [SplitList] reads back each item whole.
//   - One named setting ([Options.Args], such as data) is the command's
//     arguments: it is returned in [Result.Args] to a command whose
//     ArgsUsage names it in capitals (DATA...), and ignored by the others.
//
// # Errors
//
// Every error of [Read], [Parse] and [File.Apply] is an [*Error] naming
// the file and what is wrong in it (a setting, a section, the YAML), so
// that the program can report it as a usage error and add the flag that
// named the file.
package flagfile
