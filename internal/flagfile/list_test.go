package flagfile

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"a", []string{"a"}, ""},
		{"A, B ,C", []string{"A", "B", "C"}, ""},
		{`"Boston, MA",Paris`, []string{"Boston, MA", "Paris"}, ""},
		{"a,,b", []string{"a", "", "b"}, ""},
		{"a\nb", nil, `"a\nb": a list is one line`},
		{`"a"b"`, []string{`a"b`}, ""},
	} {
		got, err := SplitList(c.in)
		if err != nil {
			if err.Error() != c.err {
				t.Errorf("SplitList(%q): error %q, want %q", c.in, err, c.err)
			}
			continue
		}
		if c.err != "" || !slices.Equal(got, c.want) {
			t.Errorf("SplitList(%q) = %q, want %q (error %q)", c.in, got, c.want, c.err)
		}
	}
}

// SplitList reads back what JoinList writes, item for item.
func TestJoinListRoundTrip(t *testing.T) {
	for _, items := range [][]string{{"a"}, {"Boston, MA", "Paris"}, {`say "hi"`, "x,y", ""}} {
		got, err := SplitList(JoinList(items))
		if err != nil || !slices.Equal(got, items) {
			t.Errorf("SplitList(JoinList(%q)) = %q, %v", items, got, err)
		}
	}
}

// FuzzJoinList: any items without surrounding spaces or carriage returns
// (which SplitList trims and CSV folds) survive JoinList and SplitList.
func FuzzJoinList(f *testing.F) {
	f.Add("Boston, MA", "Paris", `say "hi"`)
	f.Add("", "a\nb", ",")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		items := []string{a, b, c}
		for _, s := range items {
			if s != strings.TrimSpace(s) || strings.Contains(s, "\r") {
				return
			}
		}
		got, err := SplitList(JoinList(items))
		if err != nil || !slices.Equal(got, items) {
			t.Fatalf("SplitList(JoinList(%q)) = %q, %v", items, got, err)
		}
	})
}
