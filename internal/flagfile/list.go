package flagfile

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
)

// JoinList writes items as one comma-separated flag value that SplitList
// reads back item for item: an item holding a comma or a double quote is
// quoted as in CSV ("Boston, MA" becomes "\"Boston, MA\"").
func JoinList(items []string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(items)
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}

// SplitList reads a comma-separated flag value (A,B,C) into its items,
// trimmed: a double-quoted item may hold commas, as in CSV and as
// JoinList writes a list. An empty value has no items.
func SplitList(s string) ([]string, error) {
	r := csv.NewReader(strings.NewReader(s))
	r.LazyQuotes, r.TrimLeadingSpace = true, true
	items, err := r.Read()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%q is not a comma-separated list: %v", s, err)
	}
	if _, err := r.Read(); err != io.EOF {
		return nil, fmt.Errorf("%q: a list is one line", s)
	}
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return items, nil
}
