package main

import (
	"encoding/json"
	"fmt"
	"io"
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
