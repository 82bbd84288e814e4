package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/grmdp/grmdp/internal/textfmt"
)

// printResult prints v to w: with asJSON (--json) as indented JSON ending
// in a newline, otherwise as its text.
func printResult(w io.Writer, asJSON bool, v interface{ WriteText(io.Writer) error }) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	return v.WriteText(w)
}

// tell prints each line to w as grmdp's note or warning (kind).
func tell(w io.Writer, kind string, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "grmdp: %s: %s\n", kind, l)
	}
}

// quoteName returns a name from the data or a job (a site, a cluster, an
// action label) as terminal output prints it (textfmt.Quote): Go-quoted
// when it holds a character a terminal would act on.
func quoteName(s string) string { return textfmt.Quote(s) }
