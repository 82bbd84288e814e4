package eval

import "testing"

func TestParseRange(t *testing.T) {
	for _, c := range []struct {
		in, err string
		want    Range
	}{
		{"", "", Range{}},
		{"0, 1", "", Range{0, 1}},
		{"1", `eval: return range "1": want LO,HI, two numbers`, Range{}},
		{"1,0", "eval: return range 1,0: [1, 0]: want finite LO < HI", Range{}},
	} {
		got, err := ParseRange(c.in)
		if msg := ""; err != nil {
			msg = err.Error()
			if msg != c.err {
				t.Errorf("%q: got error %q, want %q", c.in, msg, c.err)
			}
		} else if c.err != "" || got != c.want {
			t.Errorf("%q: got %v, want %v (error %q)", c.in, got, c.want, c.err)
		}
	}
}
