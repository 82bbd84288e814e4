// Package policyio stores policies as Parquet files: the rows and metadata
// of a policy artifact ([solve.Policy.ArtifactRows]) become the file's rows
// and key-value metadata ([parquetio.WritePolicy]), and reading a file back
// checks it with [solve.FromRows]. It keeps the Parquet format out of
// package solve.
package policyio

import (
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
)

// Write writes p to path, atomically, as [parquetio.WritePolicy] does.
func Write(path string, p *solve.Policy) error {
	rows, meta, err := p.ArtifactRows()
	if err != nil {
		return err
	}
	out := make([]parquetio.PolicyRow, len(rows))
	for i, r := range rows {
		out[i] = parquetio.PolicyRow(r)
	}
	return parquetio.WritePolicy(path, out, meta)
}

// Read reads the policy at path. A file that is not a policy artifact gives
// [parquetio.ReadPolicy]'s error (wrapping [parquetio.ErrSchema] for a
// Parquet file of other columns); an artifact whose content grmdp cannot
// use gives [solve.FromRows]'s (wrapping [solve.ErrBadPolicy]). Errors name
// path.
func Read(path string) (*solve.Policy, error) {
	rows, meta, err := parquetio.ReadPolicy(path)
	if err != nil {
		return nil, err
	}
	in := make([]solve.ArtifactRow, len(rows))
	for i, r := range rows {
		in[i] = solve.ArtifactRow(r)
	}
	return solve.FromRows(path, in, meta)
}
