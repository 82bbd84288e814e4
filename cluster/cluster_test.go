package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// parseCase is a file that parses; the fuzz target seeds from these too.
type parseCase struct {
	name   string // test name
	file   string // file name given to Parse
	in     string
	opts   Options
	want   []Cluster
	method string
}

func thr(t float64) Options { return Options{Threshold: t, HasThreshold: true} }

var parseCases = []parseCase{
	{
		name: "assignment csv with header",
		file: "c.csv",
		in:   "site,cluster\nb,east\na,west\nc,east\n",
		want: []Cluster{{"west", []string{"a"}}, {"east", []string{"b", "c"}}},
	},
	{
		name: "assignment csv without header",
		file: "c.csv",
		in:   "b,east\na,west\nc,east\n",
		want: []Cluster{{"west", []string{"a"}}, {"east", []string{"b", "c"}}},
	},
	{
		name: "assignment csv integer sites sort numerically",
		file: "c.csv",
		in:   "hospital,group\n10,x\n9,y\n2,x\n",
		want: []Cluster{{"x", []string{"2", "10"}}, {"y", []string{"9"}}},
	},
	{
		name: "assignment csv unknown header detected by integer sites",
		file: "c.csv",
		in:   "hosp,label\n10,x\n9,y\n2,x\n",
		want: []Cluster{{"x", []string{"2", "10"}}, {"y", []string{"9"}}},
	},
	{
		name: "assignment csv spaces bom blank lines",
		file: "c.csv",
		in:   "\uFEFFSite , Cluster\n\n a , c1 \n,\nb,c1\n",
		want: []Cluster{{"c1", []string{"a", "b"}}},
	},
	{
		name: "assignment tsv",
		file: "c.tsv",
		in:   "site\tcluster\na\tc2\nb\tc1\n",
		want: []Cluster{{"c2", []string{"a"}}, {"c1", []string{"b"}}},
	},
	{
		name: "assignment semicolons",
		file: "c.csv",
		in:   "site;cluster\na;c2\nb;c1\n",
		want: []Cluster{{"c2", []string{"a"}}, {"c1", []string{"b"}}},
	},
	{
		name:   "edge list semicolons and decimal commas",
		file:   "e.csv",
		in:     "site_a;site_b;similarity\na;b;0,9\nb;c;0,25\n",
		opts:   thr(0.5),
		want:   []Cluster{{"c1", []string{"a", "b"}}, {"c2", []string{"c"}}},
		method: MethodThreshold,
	},
	{
		name:   "matrix semicolons and decimal commas",
		file:   "s.csv",
		in:     ";a;b\na;1;0,5\nb;0,5;1\n",
		opts:   thr(0.5),
		want:   []Cluster{{"c1", []string{"a", "b"}}},
		method: MethodThreshold,
	},
	{
		name: "assignment json clusters",
		file: "c.json",
		in:   `{"clusters": [{"name": "n", "sites": ["c", "b"]}, {"name": "m", "sites": ["a"]}]}`,
		want: []Cluster{{"m", []string{"a"}}, {"n", []string{"b", "c"}}},
	},
	{
		name: "assignment json clusters numbers and provenance keys",
		file: "c.json",
		in:   `{"clusters": [{"sites": [10, 2], "name": 1}, {"name": "two", "sites": [3]}], "source": "x.csv", "method": "threshold", "threshold": 0.5}`,
		want: []Cluster{{"1", []string{"2", "10"}}, {"two", []string{"3"}}},
	},
	{
		name: "assignment json flat",
		file: "c.json",
		in:   `{"b": "c1", "a": "c2", "c": "c1"}`,
		want: []Cluster{{"c2", []string{"a"}}, {"c1", []string{"b", "c"}}},
	},
	{
		name: "assignment json flat detected by content",
		file: "-",
		in:   "  {\"1\": 7, \"2\": 7}\n",
		want: []Cluster{{"7", []string{"1", "2"}}},
	},
	{
		name:   "matrix empty corner threshold",
		file:   "s.csv",
		in:     ",a,b,c\na,1,0.9,0.1\nb,0.9,1,0.2\nc,0.1,0.2,1\n",
		opts:   thr(0.5),
		want:   []Cluster{{"c1", []string{"a", "b"}}, {"c2", []string{"c"}}},
		method: MethodThreshold,
	},
	{
		name:   "matrix labelled corner permuted rows",
		file:   "s.csv",
		in:     "site,a,b,c\nc,0.1,0.2,1\na,1,0.9,0.1\nb,0.9,1,0.2\n",
		opts:   Options{M: 2},
		want:   []Cluster{{"c1", []string{"a", "b"}}, {"c2", []string{"c"}}},
		method: MethodAverageLinkage,
	},
	{
		name:   "matrix two sites",
		file:   "s.csv",
		in:     "x,a,b\na,1,0.3\nb,0.3,1\n",
		opts:   thr(0.3),
		want:   []Cluster{{"c1", []string{"a", "b"}}},
		method: MethodThreshold,
	},
	{
		name:   "matrix one site",
		file:   "s.csv",
		in:     ",a\na,1\n",
		opts:   Options{M: 1},
		want:   []Cluster{{"c1", []string{"a"}}},
		method: MethodAverageLinkage,
	},
	{
		name:   "matrix integer sites",
		file:   "s.csv",
		in:     ",10,9,1\n10,0,5,-1\n9,5,0,-2\n1,-1,-2,0\n",
		opts:   thr(0),
		want:   []Cluster{{"c1", []string{"1"}}, {"c2", []string{"9", "10"}}},
		method: MethodThreshold,
	},
	{
		name:   "edge list with header",
		file:   "e.csv",
		in:     "site_a,site_b,similarity\na,b,0.9\nc,b,0.2\nd,d,1\n",
		opts:   thr(0.5),
		want:   []Cluster{{"c1", []string{"a", "b"}}, {"c2", []string{"c"}}, {"c3", []string{"d"}}},
		method: MethodThreshold,
	},
	{
		name:   "edge list without header repeated pair",
		file:   "e.txt",
		in:     "1,2,0.9\n2,1,0.9\n3,2,0.2\n",
		opts:   Options{M: 2},
		want:   []Cluster{{"c1", []string{"1", "2"}}, {"c2", []string{"3"}}},
		method: MethodAverageLinkage,
	},
	{
		name:   "edge list three rows not a matrix",
		file:   "e.csv",
		in:     "a,b,0.9\nb,c,0.8\nd,e,0.7\n",
		opts:   thr(0.75),
		want:   []Cluster{{"c1", []string{"a", "b", "c"}}, {"c2", []string{"d"}}, {"c3", []string{"e"}}},
		method: MethodThreshold,
	},
	{
		name:   "edge list negative similarity below threshold",
		file:   "e.csv",
		in:     "a,b,-0.5\n",
		opts:   thr(0),
		want:   []Cluster{{"c1", []string{"a"}}, {"c2", []string{"b"}}},
		method: MethodThreshold,
	},
	{
		name:   "edge list nonpositive threshold links missing pairs",
		file:   "e.csv",
		in:     "a,b,-0.5\nc,c,0\n",
		opts:   thr(0),
		want:   []Cluster{{"c1", []string{"a", "b", "c"}}},
		method: MethodThreshold,
	},
}

func TestParseForms(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Parse(strings.NewReader(tc.in), tc.file, tc.opts)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(a.Clusters, tc.want) {
				t.Errorf("got clusters %v, want %v", a.Clusters, tc.want)
			}
			method := tc.method
			if method == "" {
				method = MethodAssignment
			}
			if a.Method != method || a.Source != tc.file {
				t.Errorf("got method %q source %q, want %q %q", a.Method, a.Source, method, tc.file)
			}
			if err := checkPartition(a); err != nil {
				t.Error(err)
			}
		})
	}
}

// threshold case, worked by hand:
//
//	a-b 0.9, b-c 0.7, c-d 0.3, d-e 0.8; f has no edges.
//
// T=0.5 keeps a-b, b-c, d-e; T=0.75 keeps a-b, d-e; T=0.2 keeps all four;
// T=0 also links every unnamed pair (similarity 0), so all six are one.
func TestThreshold(t *testing.T) {
	const in = "a,b,0.9\nb,c,0.7\nc,d,0.3\nd,e,0.8\nf,f,0\n"
	tests := []struct {
		t    float64
		want [][]string
	}{
		{0.5, [][]string{{"a", "b", "c"}, {"d", "e"}, {"f"}}},
		{0.75, [][]string{{"a", "b"}, {"c"}, {"d", "e"}, {"f"}}},
		{0.2, [][]string{{"a", "b", "c", "d", "e"}, {"f"}}},
		{0, [][]string{{"a", "b", "c", "d", "e", "f"}}},
		{0.95, [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}}},
	}
	for _, tc := range tests {
		a, err := Parse(strings.NewReader(in), "e.csv", thr(tc.t))
		if err != nil {
			t.Fatalf("T=%v: %v", tc.t, err)
		}
		if got := sitesOf(a); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("T=%v: got %v, want %v", tc.t, got, tc.want)
		}
		if a.Threshold != tc.t {
			t.Errorf("T=%v: got Threshold %v", tc.t, a.Threshold)
		}
	}
}

// The 5-site average-linkage case, worked by hand:
//
//	     1    2    3    4    5
//	1    -   .9   .6   .1    0
//	2        -    .5   .2   .1
//	3             -    .7   .2
//	4                  -    .8
//
// Step 1 merges 1,2 (0.9). Averages now: {1,2}-3 = 0.55, {1,2}-4 = 0.15,
// {1,2}-5 = 0.05, 3-4 = 0.7, 3-5 = 0.2, 4-5 = 0.8. Step 2 merges 4,5 (0.8):
// {1,2}-3 = 0.55, {1,2}-{4,5} = 0.1, 3-{4,5} = 0.45. Step 3 merges {1,2}
// and 3 (0.55); single linkage would instead join 3 with {4,5} (0.7 > 0.6).
const fiveSites = `,1,2,3,4,5
1,1,.9,.6,.1,0
2,.9,1,.5,.2,.1
3,.6,.5,1,.7,.2
4,.1,.2,.7,1,.8
5,0,.1,.2,.8,1
`

func TestAverageLinkage(t *testing.T) {
	tests := []struct {
		m    int
		want [][]string
	}{
		{5, [][]string{{"1"}, {"2"}, {"3"}, {"4"}, {"5"}}},
		{4, [][]string{{"1", "2"}, {"3"}, {"4"}, {"5"}}},
		{3, [][]string{{"1", "2"}, {"3"}, {"4", "5"}}},
		{2, [][]string{{"1", "2", "3"}, {"4", "5"}}},
		{1, [][]string{{"1", "2", "3", "4", "5"}}},
	}
	for _, tc := range tests {
		a, err := Parse(strings.NewReader(fiveSites), "s.csv", Options{M: tc.m})
		if err != nil {
			t.Fatalf("M=%d: %v", tc.m, err)
		}
		if got := sitesOf(a); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("M=%d: got %v, want %v", tc.m, got, tc.want)
		}
		if a.M != tc.m {
			t.Errorf("M=%d: got M %d", tc.m, a.M)
		}
	}
}

// With every similarity equal, each step merges the lowest pair in
// canonical order: {1,2}, then {1,2} with 3 (ties with 3-4 and {1,2}-4).
// Sites 10 and 9 check that the order is numeric, not lexical.
func TestAverageLinkageTies(t *testing.T) {
	const in = ",10,9,2,1\n10,0,.5,.5,.5\n9,.5,0,.5,.5\n2,.5,.5,0,.5\n1,.5,.5,.5,0\n"
	tests := []struct {
		m    int
		want [][]string
	}{
		{3, [][]string{{"1", "2"}, {"9"}, {"10"}}},
		{2, [][]string{{"1", "2", "9"}, {"10"}}},
	}
	for _, tc := range tests {
		a, err := Parse(strings.NewReader(in), "s.csv", Options{M: tc.m})
		if err != nil {
			t.Fatalf("M=%d: %v", tc.m, err)
		}
		if got := sitesOf(a); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("M=%d: got %v, want %v", tc.m, got, tc.want)
		}
	}
}

func TestSortSites(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"10", "9", "-1", "07", "7"}, []string{"-1", "07", "7", "9", "10"}},
		{[]string{"10", "9", "a"}, []string{"10", "9", "a"}},
		{[]string{"b", "A", "a"}, []string{"A", "a", "b"}},
		{nil, nil},
	}
	for _, tc := range tests {
		got := slices.Clone(tc.in)
		SortSites(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("SortSites(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestOptionsErrors(t *testing.T) {
	const matrix = ",a,b\na,1,0.5\nb,0.5,1\n"
	const assignment = "site,cluster\na,c1\n"
	tests := []struct {
		name, in, file string
		opts           Options
		want           string
	}{
		{"both", matrix, "s.csv", Options{Threshold: 0.5, HasThreshold: true, M: 2}, "both given"},
		{"neither", matrix, "s.csv", Options{}, "s.csv holds similarities; give a threshold or a cluster count"},
		{"threshold for assignment", assignment, "c.csv", thr(0.5), "c.csv is a cluster assignment"},
		{"m for assignment", `{"a":"c1"}`, "c.json", Options{M: 1}, "c.json is a cluster assignment"},
		{"m too large", matrix, "s.csv", Options{M: 3}, "cluster count 3 exceeds the 2 sites in s.csv"},
		{"m negative", matrix, "s.csv", Options{M: -1}, "negative"},
		{"threshold nan", matrix, "s.csv", Options{Threshold: nan(), HasThreshold: true}, "not a finite number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in), tc.file, tc.opts)
			if !errors.Is(err, ErrOptions) {
				t.Fatalf("got error %v, want one wrapping ErrOptions", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// errorCase is a file that must not parse; the fuzz target seeds from
// these too.
type errorCase struct {
	name, file, in string
	opts           Options
	line, col      int    // want location in the *ParseError
	msg            string // want substring of the message
}

var errorCases = []errorCase{
	{"empty file", "s.csv", "", thr(0), 0, 0, "empty file"},
	{"blank file", "s.json", " \n\n", Options{}, 0, 0, "empty file"},
	{"empty csv rows", "s.csv", ",,\n,,\n", thr(0), 0, 0, "empty file"},
	{"one field", "s.csv", "a\nb\n", thr(0), 1, 0, "1 field"},
	{"matrix not square", "s.csv", ",a,b,c\na,1,0,0\nb,0,1,0\n", thr(0), 0, 0, "matrix not square: 2 rows, 3 columns"},
	{"matrix short row", "s.csv", ",a,b,c\na,1,0,0\nb,0,1\nc,0,0,1\n", thr(0), 3, 0, "3 fields, want 4"},
	{"matrix not symmetric", "s.csv", ",a,b,c\na,1,0.5,0\nb,0.5,1,0.25\nc,0,0.2,1\n", thr(0), 4, 3,
		`matrix not symmetric: row "c" column "b" is 0.2 but row "b" column "c" is 0.25 (line 3, column 4)`},
	{"matrix names disagree", "s.csv", ",a,b,c\na,1,0,0\nb,0,1,0\nd,0,0,1\n", thr(0), 4, 1, `site "d" in the first column is not in the header`},
	{"matrix non-numeric", "s.csv", ",a,b,c\na,1,0,0\nb,0,1,x\nc,0,0,1\n", thr(0), 3, 4, `value "x" for sites "b" and "c" is not a number`},
	{"matrix empty cell", "s.csv", ",a,b,c\na,1,,0\nb,0,1,0\nc,0,0,1\n", thr(0), 2, 3, `value "" for sites "a" and "b" is empty`},
	{"matrix nan", "s.csv", ",a,b,c\na,1,0,0\nb,0,NaN,0\nc,0,0,1\n", thr(0), 3, 3, "is NaN"},
	{"matrix inf", "s.csv", ",a,b,c\na,1,0,0\nb,0,1,-Inf\nc,0,0,1\n", thr(0), 3, 4, "is not finite"},
	{"matrix header site twice", "s.csv", ",a,b,a\na,1,0,0\nb,0,1,0\na,0,0,1\n", thr(0), 1, 4, `site "a" listed twice in the header (columns 2 and 4)`},
	{"matrix row site twice", "s.csv", ",a,b,c\na,1,0,0\nb,0,1,0\na,0,0,1\n", thr(0), 4, 1, `site "a" listed twice in the first column (lines 2 and 4)`},
	{"matrix empty header site", "s.csv", ",a,,c\na,1,0,0\nb,0,1,0\nc,0,0,1\n", thr(0), 1, 3, "empty site name in the header"},
	{"edge list wrong field count", "e.csv", "a,b,0.5\nb,c\n", thr(0), 2, 0, "2 fields, want 3 (site_a,site_b,similarity)"},
	{"edge list non-numeric", "e.csv", "site_a,site_b,s\na,b,0.5\nb,c,high\n", thr(0), 3, 3, `similarity "high" for sites "b" and "c" is not a number`},
	{"edge list nan", "e.csv", "a,b,0.5\nb,c,nan\n", thr(0), 2, 3, "is NaN"},
	{"edge list pair twice", "e.csv", "a,b,0.5\nb,c,0.1\nb,a,0.6\n", thr(0), 3, 3, `sites "b" and "a" have similarity 0.5 on line 1 but 0.6 here`},
	{"edge list empty site", "e.csv", "a,b,0.5\n,c,0.1\n", thr(0), 2, 1, "empty site name"},
	{"edge list header only", "e.csv", "site_a,site_b,similarity\n", thr(0), 0, 0, "no edges"},
	{"assignment wrong field count", "c.csv", "site,cluster\na,c1\nb,c1,x\n", Options{}, 3, 0, "3 fields, want 2 (site,cluster)"},
	{"assignment site twice", "c.csv", "site,cluster\na,c1\nb,c2\na,c1\n", Options{}, 4, 1, `site "a" listed twice (lines 2 and 4)`},
	{"assignment site in two clusters", "c.csv", "site,cluster\na,c1\nb,c2\na,c2\n", Options{}, 4, 1, `site "a" assigned to cluster "c1" on line 2 and to cluster "c2" here`},
	{"assignment empty cluster", "c.csv", "site,cluster\na,\n", Options{}, 2, 2, "empty cluster name"},
	{"assignment header only", "c.csv", "site,cluster\n", Options{}, 0, 0, "header only"},
	{"csv bare quote", "c.csv", "a,c\"1\n", Options{}, 1, 0, "bare \""},
	{"json syntax", "c.json", "{\"clusters\": [\n{\"name\": \"c1\" \"sites\": []}]}", Options{}, 2, 0, "invalid JSON"},
	{"json truncated", "c.json", "{\"a\": \"c1\",\n", Options{}, 2, 0, "invalid JSON"},
	{"json not object", "c.json", "[1, 2]", Options{}, 1, 0, "want a JSON object"},
	{"json trailing data", "c.json", "{\"a\": \"c1\"}\n{}", Options{}, 2, 0, "unexpected data after the JSON object"},
	{"json flat site twice", "c.json", "{\"a\": \"c1\",\n\"b\": \"c1\",\n\"a\": \"c2\"}", Options{}, 3, 0, `site "a" listed twice (lines 1 and 3)`},
	{"json flat bad value", "c.json", `{"a": ["c1"]}`, Options{}, 1, 0, "must be a string or a number"},
	{"json flat empty", "c.json", `{}`, Options{}, 1, 0, "no sites"},
	{"json site in two clusters", "c.json", "{\"clusters\": [\n{\"name\": \"c1\", \"sites\": [\"a\"]},\n{\"name\": \"c2\", \"sites\": [\"b\", \"a\"]}]}", Options{}, 3, 0,
		`site "a" assigned to clusters "c1" and "c2"`},
	{"json site twice in cluster", "c.json", `{"clusters": [{"name": "c1", "sites": ["a", "a"]}]}`, Options{}, 1, 0, `site "a" listed twice in cluster "c1"`},
	{"json cluster name twice", "c.json", "{\"clusters\": [\n{\"name\": \"c1\", \"sites\": [\"a\"]},\n{\"name\": \"c1\", \"sites\": [\"b\"]}]}", Options{}, 3, 0,
		`cluster "c1" listed twice (lines 2 and 3)`},
	{"json cluster without sites", "c.json", `{"clusters": [{"name": "c1", "sites": []}]}`, Options{}, 1, 0, `cluster "c1" has no sites`},
	{"json cluster without name", "c.json", `{"clusters": [{"sites": ["a"]}]}`, Options{}, 1, 0, "a cluster has no name"},
	{"json unknown key", "c.json", `{"clusters": [], "sitez": 1}`, Options{}, 1, 0, `unknown key "sitez"`},
	{"json unknown cluster key", "c.json", `{"clusters": [{"name": "c1", "site": ["a"]}]}`, Options{}, 1, 0, `unknown key "site" in a cluster`},
	{"json no clusters", "c.json", `{"clusters": []}`, Options{}, 1, 0, "no clusters"},
	{"json sites not a list", "c.json", `{"clusters": [{"name": "c1", "sites": "a"}]}`, Options{}, 1, 0, "want a list of sites"},
	{"json site not a string", "c.json", `{"clusters": [{"name": "c1", "sites": [null]}]}`, Options{}, 1, 0, "site must be a string or a number"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Parse(strings.NewReader(tc.in), tc.file, tc.opts)
			if err == nil {
				t.Fatalf("got clusters %v, want an error", a.Clusters)
			}
			if !errors.Is(err, ErrBadSimilarity) {
				t.Errorf("got error %v, want one wrapping ErrBadSimilarity", err)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got error %T %v, want a *ParseError", err, err)
			}
			if pe.File != tc.file || pe.Line != tc.line || pe.Column != tc.col {
				t.Errorf("got location %s:%d:%d, want %s:%d:%d (%v)", pe.File, pe.Line, pe.Column, tc.file, tc.line, tc.col, err)
			}
			if !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("got message %q, want it to contain %q", pe.Msg, tc.msg)
			}
			msg := err.Error()
			if msg != strings.ToLower(msg[:1])+msg[1:] || strings.HasSuffix(msg, ".") {
				t.Errorf("message %q should start lowercase and not end in a period", msg)
			}
		})
	}
}

func TestParseErrorFormat(t *testing.T) {
	tests := []struct {
		err  *ParseError
		want string
	}{
		{&ParseError{File: "s.csv", Line: 3, Column: 4, Msg: "bad"}, "s.csv: line 3, column 4: bad"},
		{&ParseError{File: "s.json", Line: 2, Msg: "bad"}, "s.json: line 2: bad"},
		{&ParseError{File: "s.csv", Msg: "empty file"}, "s.csv: empty file"},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestGroups(t *testing.T) {
	a := &Assignment{
		Source: "c.json",
		Clusters: []Cluster{
			{"north", []string{"a", "b"}},
			{"south", []string{"c", "d"}},
			{"west", []string{"e"}},
		},
	}
	tests := []struct {
		name       string
		sites      []string
		singletons bool
		groups     [][]int
		names      []string
		warnings   []string
		err        string
	}{
		{
			name:   "all present, data order differs",
			sites:  []string{"d", "a", "e", "c", "b"},
			groups: [][]int{{0, 3}, {1, 4}, {2}},
			names:  []string{"south", "north", "west"},
		},
		{
			name:   "file sites without data, empty cluster dropped",
			sites:  []string{"c", "a"},
			groups: [][]int{{0}, {1}},
			names:  []string{"south", "north"},
			warnings: []string{
				`cluster: site "b" of cluster "north" in c.json has no data`,
				`cluster: site "d" of cluster "south" in c.json has no data`,
				`cluster: site "e" of cluster "west" in c.json has no data`,
				`cluster: cluster "west" in c.json has no sites in the data; dropped`,
			},
		},
		{
			name:  "missing site is an error",
			sites: []string{"a", "b", "c", "d", "e", "x"},
			err:   `cluster: site missing from cluster file: site "x" is in the data but not in c.json; add it to a cluster, or allow singletons (--allow-singletons) to give it a group of its own`,
		},
		{
			name:  "missing sites are listed",
			sites: []string{"z", "a", "b", "c", "d", "e", "y"},
			err:   `sites "z", "y" are in the data`,
		},
		{
			name:       "singletons",
			sites:      []string{"x", "a", "b", "c", "d", "e", "west"},
			singletons: true,
			groups:     [][]int{{0}, {1, 2}, {3, 4}, {5}, {6}},
			names:      []string{"x", "north", "south", "west", "west (singleton 2)"},
			warnings: []string{
				`cluster: site "x" is not in c.json; it forms group "x" of its own`,
				`cluster: site "west" is not in c.json; it forms group "west (singleton 2)" of its own`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			groups, names, warnings, err := a.Groups(tc.sites, tc.singletons)
			if tc.err != "" {
				if !errors.Is(err, ErrMissingSite) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got error %v, want ErrMissingSite containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(groups, tc.groups) || !slices.Equal(names, tc.names) {
				t.Errorf("got groups %v names %q, want %v %q", groups, names, tc.groups, tc.names)
			}
			var got []string
			for _, w := range warnings {
				got = append(got, w.Error())
			}
			if !slices.Equal(got, tc.warnings) {
				t.Errorf("got warnings %q, want %q", got, tc.warnings)
			}
		})
	}
}

func TestGroupsInvalidAssignment(t *testing.T) {
	a := &Assignment{Source: "x", Clusters: []Cluster{{"c1", []string{"a"}}, {"c2", []string{"a"}}}}
	if _, _, _, err := a.Groups([]string{"a"}, false); !errors.Is(err, ErrBadSimilarity) {
		t.Errorf("got error %v, want one wrapping ErrBadSimilarity", err)
	}
}

func TestGroupsPanicsOnDuplicateSite(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("got no panic for a duplicate data site")
		}
	}()
	a := &Assignment{Clusters: []Cluster{{"c1", []string{"a"}}}}
	a.Groups([]string{"a", "a"}, false)
}

func TestWriteJSON(t *testing.T) {
	a, err := Parse(strings.NewReader(fiveSites), "s.csv", Options{M: 2})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := a.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	const want = `{
  "clusters": [
    {
      "name": "c1",
      "sites": [
        "1",
        "2",
        "3"
      ]
    },
    {
      "name": "c2",
      "sites": [
        "4",
        "5"
      ]
    }
  ],
  "source": "s.csv",
  "method": "average-linkage",
  "m": 2
}
`
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// A threshold of 0 is still written.
	a, err = Parse(strings.NewReader(fiveSites), "s.csv", thr(0))
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := a.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"threshold": 0`) {
		t.Errorf("got %s, want a threshold of 0", buf.String())
	}
}

func TestWriteJSONLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range parseCases {
		a, err := Parse(strings.NewReader(tc.in), tc.file, tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		path := filepath.Join(dir, "clusters.json")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteJSON(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := Load(path, Options{})
		if err != nil {
			t.Fatalf("%s: Load: %v", tc.name, err)
		}
		if !reflect.DeepEqual(b.Clusters, a.Clusters) || b.Method != MethodAssignment || b.Source != path {
			t.Errorf("%s: got %+v, want clusters %v from %s", tc.name, b, a.Clusters, path)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.csv"), Options{})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got error %v, want one wrapping os.ErrNotExist", err)
	}
}

// sitesOf returns the sites of each cluster of a.
func sitesOf(a *Assignment) [][]string {
	var out [][]string
	for _, c := range a.Clusters {
		out = append(out, c.Sites)
	}
	return out
}

// checkPartition checks the invariants of every Assignment Parse returns:
// each site once, no empty cluster, unique non-empty names, canonical order.
func checkPartition(a *Assignment) error {
	if err := a.validate(); err != nil {
		return err
	}
	if len(a.Clusters) == 0 {
		return errors.New("no clusters")
	}
	all := a.Sites()
	rank := make(map[string]int, len(all))
	for i, s := range all {
		rank[s] = i
	}
	if len(rank) != len(all) {
		return errors.New("a site is in two clusters")
	}
	for i, c := range a.Clusters {
		for j := 1; j < len(c.Sites); j++ {
			if rank[c.Sites[j-1]] >= rank[c.Sites[j]] {
				return fmt.Errorf("cluster %q: sites %q not in canonical order", c.Name, c.Sites)
			}
		}
		if i > 0 && rank[c.Sites[0]] <= rank[a.Clusters[i-1].Sites[0]] {
			return errors.New("clusters not sorted by smallest site")
		}
	}
	switch a.Method {
	case MethodAssignment, MethodThreshold:
	case MethodAverageLinkage:
		if len(a.Clusters) != a.M {
			return fmt.Errorf("average linkage gave %d clusters, want %d", len(a.Clusters), a.M)
		}
	default:
		return fmt.Errorf("unknown method %q", a.Method)
	}
	return nil
}

func nan() float64 { return math.NaN() }
