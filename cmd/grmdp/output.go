package main

import (
	"encoding/json"
	"fmt"
	"io"
)

// writeJSON prints v to w as indented JSON ending in a newline, as every
// command's --json does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printResult prints v to w: as JSON with asJSON (--json), otherwise as
// its text.
func printResult(w io.Writer, asJSON bool, v interface{ WriteText(io.Writer) error }) error {
	if asJSON {
		return writeJSON(w, v)
	}
	return v.WriteText(w)
}

// tell prints each line to w as grmdp's note or warning (kind).
func tell(w io.Writer, kind string, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "grmdp: %s: %s\n", kind, l)
	}
}
