package main

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// quoteName returns a name from the data or a job (a site, a cluster, an
// action label) as terminal output prints it: unchanged when it is valid
// UTF-8 and every character is printable, Go-quoted otherwise
// ("a\x1b[2Jb"), so that a control character in a name (an escape
// sequence, a carriage return, a newline) never reaches the terminal raw.
// JSON output escapes names by itself.
func quoteName(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// quoteNames is quoteName of every name.
func quoteNames(names []string) []string {
	out := make([]string, len(names))
	for i, s := range names {
		out[i] = quoteName(s)
	}
	return out
}
