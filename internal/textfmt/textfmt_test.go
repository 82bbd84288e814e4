package textfmt

import (
	"math"
	"testing"
)

func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"site A", "site A"},
		{"é", "é"},
		{"a\x1b[2Jb", `"a\x1b[2Jb"`},
		{"a\nb", `"a\nb"`},
		{"\xff", `"\xff"`},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestNum(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{{0.123456, "0.1235"}, {math.NaN(), "-"}, {math.Inf(1), "-"}, {1e6, "1e+06"}} {
		if got := Num(c.in); got != c.want {
			t.Errorf("Num(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}
