package parquetio

import (
	"strconv"

	"github.com/grmdp/grmdp/traj"
)

// PrefixedColumns returns the columns prefix1, prefix2, ... (stopping at
// the first missing index) of the first Parquet file among paths: the
// default state columns s1..sp of the action-block map.
func PrefixedColumns(paths []string, prefix string) ([]string, error) {
	ins, err := expandPaths(paths, traj.DefaultColumns.Site)
	if err != nil {
		return nil, err
	}
	_, _, md, err := openFooter(ins[0].path)
	if err != nil {
		return nil, err
	}
	root := md.Schema.Root()
	have := map[string]bool{}
	for i := 0; i < root.NumFields(); i++ {
		have[root.Field(i).Name()] = true
	}
	var cols []string
	for i := 1; have[prefix+strconv.Itoa(i)]; i++ {
		cols = append(cols, prefix+strconv.Itoa(i))
	}
	return cols, nil
}
