// Package textfmt holds the few helpers grmdp's text reports share: how a
// name from the data reaches a terminal and how a number prints in a
// table.
package textfmt

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Quote returns a name from the data or a job (a site, a cluster, an
// action label) as text output prints it: unchanged when it is valid
// UTF-8 and every character is printable, Go-quoted otherwise
// ("a\x1b[2Jb"), so that a control character in a name (an escape
// sequence, a carriage return, a newline) never reaches the terminal raw.
// JSON output escapes names by itself.
func Quote(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// QuoteAll is Quote of every name.
func QuoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, s := range names {
		out[i] = Quote(s)
	}
	return out
}

// Num formats x as the tables do (%.4g), "-" for NaN and the infinities
// (a value not computed).
func Num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return fmt.Sprintf("%.4g", x)
}

// ErrWriter passes writes on to W until one fails and drops the rest, so
// that a report can print line by line and return the first error, Err,
// once at the end.
type ErrWriter struct {
	W   io.Writer
	Err error
}

func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return len(p), nil
	}
	var n int
	n, e.Err = e.W.Write(p)
	return n, e.Err
}
