package cluster

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/grmdp/grmdp/internal/textfmt"
)

// Methods recorded in [Assignment.Method].
const (
	MethodAssignment     = "assignment"      // read from an assignment file
	MethodThreshold      = "threshold"       // components at a similarity threshold
	MethodAverageLinkage = "average-linkage" // average linkage cut at M clusters
)

// Cluster is one named group of sites.
type Cluster struct {
	Name  string   `json:"name"`
	Sites []string `json:"sites"`
}

// Assignment is a partition of sites into clusters, in canonical order:
// sites within a cluster are sorted and clusters are sorted by their
// smallest site (see [SortSites]). Every site appears in exactly one
// cluster and no cluster is empty.
type Assignment struct {
	Clusters []Cluster `json:"clusters"`
	// Source is the name of the file the assignment came from.
	Source string `json:"source"`
	// Method is MethodAssignment, MethodThreshold or MethodAverageLinkage.
	Method string `json:"method"`
	// Threshold is the threshold used by MethodThreshold.
	Threshold float64 `json:"threshold,omitempty"`
	// M is the number of clusters asked of MethodAverageLinkage.
	M int `json:"m,omitempty"`
}

// Options says how to turn similarities into clusters. The zero value gives
// neither a threshold nor a cluster count, which is what an assignment file
// needs; similarities need exactly one of the two.
type Options struct {
	// Threshold links two sites whose similarity is at least Threshold;
	// clusters are the connected components. It is used only when
	// HasThreshold is set, so that a threshold of 0 can be given.
	Threshold    float64
	HasThreshold bool
	// M, when positive, asks average-linkage clustering for M clusters.
	M int
}

func (o Options) check() error {
	if o.HasThreshold && o.M != 0 {
		return optionsError("a threshold and a cluster count are both given; give one")
	}
	if o.HasThreshold && (math.IsNaN(o.Threshold) || math.IsInf(o.Threshold, 0)) {
		return optionsError("threshold %v is not a finite number", o.Threshold)
	}
	if o.M < 0 {
		return optionsError("cluster count %d is negative", o.M)
	}
	return nil
}

// Load reads the similarity or cluster file at path; see [Parse].
func Load(path string, opts Options) (*Assignment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	defer f.Close()
	return Parse(f, path, opts)
}

// Parse reads a similarity or cluster file from r and returns its clusters
// in canonical order. Name is used in error messages and as
// [Assignment.Source]; its extension chooses the format (".json" is JSON;
// ".csv", ".tsv" and ".txt" are delimited text) and any other name lets the
// content decide. See the package documentation for the forms accepted.
//
// Errors in the file wrap [ErrBadSimilarity] (most are a *[ParseError]);
// options that do not fit the file wrap [ErrOptions].
func Parse(r io.Reader, name string, opts Options) (*Assignment, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("cluster: read %s: %w", name, err)
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errAt(name, 0, 0, "empty file")
	}

	ext := strings.ToLower(filepath.Ext(name))
	isJSON := ext == ".json"
	if ext != ".json" && ext != ".csv" && ext != ".tsv" && ext != ".txt" {
		isJSON = bytes.TrimSpace(data)[0] == '{'
	}
	if isJSON {
		a, err := parseJSON(data, name)
		if err != nil {
			return nil, err
		}
		return finishAssignment(a, opts)
	}

	comma := sniffComma(data, ext)
	recs, err := readCSV(data, name, comma)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, errAt(name, 0, 0, "empty file")
	}
	// Spreadsheets that separate fields with semicolons write decimal commas.
	num := numberReader(comma == ';')
	switch csvForm(recs, num) {
	case formAssignment:
		a, err := parseAssignmentCSV(recs, name)
		if err != nil {
			return nil, err
		}
		return finishAssignment(a, opts)
	case formEdges:
		s, err := parseEdges(recs, name, num)
		if err != nil {
			return nil, err
		}
		return s.cluster(opts)
	default:
		s, err := parseMatrix(recs, name, num)
		if err != nil {
			return nil, err
		}
		return s.cluster(opts)
	}
}

func finishAssignment(a *Assignment, opts Options) (*Assignment, error) {
	if opts.HasThreshold || opts.M != 0 {
		return nil, optionsError("%s is a cluster assignment; a threshold or a cluster count applies only to similarities", a.Source)
	}
	a.Method = MethodAssignment
	a.canonicalize()
	return a, nil
}

// canonicalize sorts sites within each cluster and clusters by their
// smallest site, all in the order [SortSites] gives for the file's sites.
func (a *Assignment) canonicalize() {
	var all []string
	for _, c := range a.Clusters {
		all = append(all, c.Sites...)
	}
	SortSites(all)
	rank := make(map[string]int, len(all))
	for i, s := range all {
		rank[s] = i
	}
	for _, c := range a.Clusters {
		slices.SortFunc(c.Sites, func(x, y string) int { return rank[x] - rank[y] })
	}
	slices.SortFunc(a.Clusters, func(x, y Cluster) int { return rank[x.Sites[0]] - rank[y.Sites[0]] })
}

// validate checks that a is a partition with unique, non-empty names.
func (a *Assignment) validate() error {
	names := make(map[string]bool, len(a.Clusters))
	where := make(map[string]string)
	for _, c := range a.Clusters {
		if c.Name == "" {
			return fmt.Errorf("%w: %s: a cluster has no name", ErrBadSimilarity, a.Source)
		}
		if names[c.Name] {
			return fmt.Errorf("%w: %s: cluster %q listed twice", ErrBadSimilarity, a.Source, c.Name)
		}
		names[c.Name] = true
		if len(c.Sites) == 0 {
			return fmt.Errorf("%w: %s: cluster %q has no sites", ErrBadSimilarity, a.Source, c.Name)
		}
		for _, s := range c.Sites {
			if s == "" {
				return fmt.Errorf("%w: %s: cluster %q has an empty site name", ErrBadSimilarity, a.Source, c.Name)
			}
			if prev, ok := where[s]; ok {
				return fmt.Errorf("%w: %s: site %q is in clusters %q and %q", ErrBadSimilarity, a.Source, s, prev, c.Name)
			}
			where[s] = c.Name
		}
	}
	return nil
}

// Sites returns every site of a in canonical order.
func (a *Assignment) Sites() []string {
	var all []string
	for _, c := range a.Clusters {
		all = append(all, c.Sites...)
	}
	SortSites(all)
	return all
}

// SortSites sorts site names in place in the canonical order: numerically
// if every name parses as a base-10 integer (names equal as numbers, such
// as "7" and "07", then sort as strings), and as strings otherwise.
func SortSites(sites []string) {
	nums := make([]int64, len(sites))
	for i, s := range sites {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			slices.Sort(sites)
			return
		}
		nums[i] = v
	}
	idx := make([]int, len(sites))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int {
		switch {
		case nums[i] < nums[j]:
			return -1
		case nums[i] > nums[j]:
			return 1
		}
		return strings.Compare(sites[i], sites[j])
	})
	sorted := make([]string, len(sites))
	for k, i := range idx {
		sorted[k] = sites[i]
	}
	copy(sites, sorted)
}

// Groups maps a onto the sites of a data set. Sites lists the data's sites,
// each once; a group is a slice of indices into sites, ascending, and groups
// are ordered by their smallest index. Names[g] is the name of group g: its
// cluster's name, or for a singleton the site's own name (made unique if a
// cluster already has it).
//
// A data site that a does not assign is an error wrapping [ErrMissingSite],
// unless allowSingletons is set: then the site forms a group of its own and
// a warning says so. Sites of a with no data, and clusters left with no
// data sites (which are dropped), are reported as warnings.
//
// It panics if sites lists a site twice.
func (a *Assignment) Groups(sites []string, allowSingletons bool) (groups [][]int, names []string, warnings []error, err error) {
	if err := a.validate(); err != nil {
		return nil, nil, nil, err
	}
	index := make(map[string]int, len(sites))
	for i, s := range sites {
		if _, dup := index[s]; dup {
			panic("cluster: Groups: site listed twice in sites")
		}
		index[s] = i
	}
	inFile := make(map[string]bool)
	taken := make(map[string]bool, len(a.Clusters))
	for _, c := range a.Clusters {
		taken[c.Name] = true
		for _, s := range c.Sites {
			inFile[s] = true
		}
	}
	var missing []string
	for _, s := range sites {
		if !inFile[s] {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 && !allowSingletons {
		what, verb, fix := "site", "is", "add it to a cluster, or allow singletons (--allow-singletons) to give it a group of its own"
		if len(missing) > 1 {
			what, verb, fix = "sites", "are", "add them to clusters, or allow singletons (--allow-singletons) to give each a group of its own"
		}
		return nil, nil, nil, fmt.Errorf("%w: %s %s %s in the data but not in %s; %s",
			ErrMissingSite, what, quoteList(missing, 5), verb, a.Source, fix)
	}

	type group struct {
		name    string
		members []int
	}
	var gs []group
	for _, c := range a.Clusters {
		var members []int
		for _, s := range c.Sites {
			if i, ok := index[s]; ok {
				members = append(members, i)
			} else {
				warnings = append(warnings, fmt.Errorf("cluster: site %q of cluster %q in %s has no data", s, c.Name, a.Source))
			}
		}
		if len(members) == 0 {
			warnings = append(warnings, fmt.Errorf("cluster: cluster %q in %s has no sites in the data; dropped", c.Name, a.Source))
			continue
		}
		slices.Sort(members)
		gs = append(gs, group{c.Name, members})
	}
	for _, s := range missing {
		name := s
		for k := 2; taken[name]; k++ {
			name = fmt.Sprintf("%s (singleton %d)", s, k)
		}
		taken[name] = true
		gs = append(gs, group{name, []int{index[s]}})
		warnings = append(warnings, fmt.Errorf("cluster: site %q is not in %s; it forms group %q of its own", s, a.Source, name))
	}
	slices.SortFunc(gs, func(x, y group) int { return x.members[0] - y.members[0] })
	for _, g := range gs {
		groups = append(groups, g.members)
		names = append(names, g.name)
	}
	return groups, names, warnings, nil
}

// MarshalJSON writes a in the canonical form that [Parse] reads back: keys
// clusters, source, method, then threshold (only for MethodThreshold, even
// when 0) or m (only for MethodAverageLinkage).
func (a Assignment) MarshalJSON() ([]byte, error) {
	type cl struct {
		Name  string   `json:"name"`
		Sites []string `json:"sites"`
	}
	out := struct {
		Clusters  []cl     `json:"clusters"`
		Source    string   `json:"source"`
		Method    string   `json:"method"`
		Threshold *float64 `json:"threshold,omitempty"`
		M         int      `json:"m,omitempty"`
	}{Clusters: make([]cl, 0, len(a.Clusters)), Source: a.Source, Method: a.Method}
	for _, c := range a.Clusters {
		sites := c.Sites
		if sites == nil {
			sites = []string{}
		}
		out.Clusters = append(out.Clusters, cl{c.Name, sites})
	}
	switch a.Method {
	case MethodThreshold:
		t := a.Threshold
		out.Threshold = &t
	case MethodAverageLinkage:
		out.M = a.M
	}
	return json.Marshal(out)
}

// WriteJSON writes a to w as indented JSON (see [Assignment.MarshalJSON])
// ending in a newline.
func (a *Assignment) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// WriteText prints a as a table, one row per cluster: its name and sites
// and, unless trajectories is nil, the number of trajectories of its sites
// (trajectories[site]).
func (a *Assignment) WriteText(w io.Writer, trajectories map[string]int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "cluster\tsites")
	if trajectories != nil {
		fmt.Fprint(tw, "\ttrajectories")
	}
	fmt.Fprintln(tw)
	for _, cl := range a.Clusters {
		fmt.Fprintf(tw, "%s\t%v", textfmt.Quote(cl.Name), textfmt.QuoteAll(cl.Sites))
		if trajectories != nil {
			n := 0
			for _, s := range cl.Sites {
				n += trajectories[s]
			}
			fmt.Fprintf(tw, "\t%d", n)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// quoteList quotes up to max names and says how many more there are.
func quoteList(names []string, max int) string {
	var b strings.Builder
	for i, s := range names {
		if i == max {
			fmt.Fprintf(&b, " and %d more", len(names)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(s))
	}
	return b.String()
}

// record is one CSV row with its fields trimmed of surrounding space.
type record struct {
	fields []string
	line   int
}

// sniffComma picks the field delimiter: a tab for ".tsv"; otherwise the
// most frequent of comma, tab and semicolon on the first line, ties going
// to the comma, then the tab.
func sniffComma(data []byte, ext string) rune {
	if ext == ".tsv" {
		return '\t'
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	best, count := ',', bytes.Count(first, []byte(","))
	for _, c := range []rune{'\t', ';'} {
		if n := bytes.Count(first, []byte(string(c))); n > count {
			best, count = c, n
		}
	}
	return best
}

// readCSV reads every row of data, skipping rows whose fields are all
// empty (blank lines, and the ",,," rows spreadsheets leave behind).
func readCSV(data []byte, name string, comma rune) ([]record, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = comma
	r.FieldsPerRecord = -1
	var recs []record
	for {
		fields, err := r.Read()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, errAt(name, pe.Line, 0, "%v (character %d)", pe.Err, pe.Column)
			}
			return nil, fmt.Errorf("%w: %s: %v", ErrBadSimilarity, name, err)
		}
		line, _ := r.FieldPos(0)
		blank := true
		for i, f := range fields {
			if !utf8.ValidString(f) {
				return nil, errAt(name, line, i+1, "not valid UTF-8 text")
			}
			fields[i] = strings.TrimSpace(f)
			if fields[i] != "" {
				blank = false
			}
		}
		if !blank {
			recs = append(recs, record{fields, line})
		}
	}
}

type form int

const (
	formAssignment form = iota
	formEdges
	formMatrix
)

// csvForm tells the three CSV forms apart by the first row. Two fields:
// an assignment. Three fields: an edge list, unless the rows read as a
// 2-site matrix (three rows whose first cells repeat the header's last two
// and whose other cells are numbers). An empty first cell, or four or more
// fields: a matrix. An empty first cell never starts an assignment or an
// edge list, as site names are not empty.
func csvForm(recs []record, num func(string) (float64, string)) form {
	h := recs[0].fields
	switch {
	case h[0] == "" || len(h) > 3 || len(h) < 2:
		return formMatrix
	case len(h) == 2:
		return formAssignment
	}
	if len(recs) != 3 {
		return formEdges
	}
	for i, r := range recs[1:] {
		if len(r.fields) != 3 || r.fields[0] != h[i+1] {
			return formEdges
		}
		for _, v := range r.fields[1:] {
			if _, bad := num(v); bad != "" {
				return formEdges
			}
		}
	}
	return formMatrix
}

var (
	siteHeaders    = []string{"site", "sites", "site_id", "siteid", "site id", "site_name", "hospital", "hospital_id", "id"}
	clusterHeaders = []string{"cluster", "clusters", "cluster_id", "clusterid", "cluster id", "cluster_name", "group", "group_id"}
)

// isAssignmentHeader reports whether the first of recs is a header: its
// first cell names a site column or its second a cluster column (any case),
// or its site is not an integer while every later row's site is.
func isAssignmentHeader(recs []record) bool {
	h := recs[0].fields
	if slices.Contains(siteHeaders, strings.ToLower(h[0])) || slices.Contains(clusterHeaders, strings.ToLower(h[1])) {
		return true
	}
	if len(recs) < 2 || isInt(h[0]) {
		return false
	}
	for _, r := range recs[1:] {
		if !isInt(r.fields[0]) {
			return false
		}
	}
	return true
}

func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// parseAssignmentCSV reads "site,cluster" rows.
func parseAssignmentCSV(recs []record, name string) (*Assignment, error) {
	for _, r := range recs {
		if len(r.fields) != 2 {
			return nil, errAt(name, r.line, 0, "%d fields, want 2 (site,cluster) as on line %d", len(r.fields), recs[0].line)
		}
	}
	if isAssignmentHeader(recs) {
		recs = recs[1:]
	}
	if len(recs) == 0 {
		return nil, errAt(name, 0, 0, "no sites: the file has a header only")
	}
	type seen struct {
		cluster string
		line    int
	}
	sites := make(map[string]seen, len(recs))
	byName := make(map[string]int)
	a := &Assignment{Source: name}
	for _, r := range recs {
		site, cl := r.fields[0], r.fields[1]
		if site == "" {
			return nil, errAt(name, r.line, 1, "empty site name")
		}
		if cl == "" {
			return nil, errAt(name, r.line, 2, "site %q has an empty cluster name", site)
		}
		if prev, ok := sites[site]; ok {
			if prev.cluster != cl {
				return nil, errAt(name, r.line, 1, "site %q assigned to cluster %q on line %d and to cluster %q here", site, prev.cluster, prev.line, cl)
			}
			return nil, errAt(name, r.line, 1, "site %q listed twice (lines %d and %d)", site, prev.line, r.line)
		}
		sites[site] = seen{cl, r.line}
		k, ok := byName[cl]
		if !ok {
			k = len(a.Clusters)
			byName[cl] = k
			a.Clusters = append(a.Clusters, Cluster{Name: cl})
		}
		a.Clusters[k].Sites = append(a.Clusters[k].Sites, site)
	}
	return a, nil
}

// jsonFile reads the JSON forms and turns byte offsets into line numbers.
type jsonFile struct {
	data []byte
	name string
}

func (f jsonFile) line(off int64) int {
	off = min(max(off, 0), int64(len(f.data)))
	return bytes.Count(f.data[:off], []byte("\n")) + 1
}

func (f jsonFile) errAt(off int64, format string, args ...any) error {
	return errAt(f.name, f.line(off), 0, format, args...)
}

// syntaxErr turns an error from encoding/json into a *ParseError.
func (f jsonFile) syntaxErr(err error, off int64) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return f.errAt(se.Offset, "invalid JSON: %v", se)
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return f.errAt(int64(len(f.data)), "invalid JSON: unexpected end of file")
	}
	return f.errAt(off, "invalid JSON: %v", err)
}

// text returns the string or number at tok as site or cluster text.
func text(tok json.Token) (string, bool) {
	switch v := tok.(type) {
	case string:
		return strings.TrimSpace(v), true
	case json.Number:
		return v.String(), true
	}
	return "", false
}

type jsonEntry struct {
	key   string
	raw   json.RawMessage
	start int64 // offset of raw in the file
}

// parseJSON reads {"clusters":[{"name":..., "sites":[...]}, ...]} (the
// form [Assignment.WriteJSON] writes) or a flat {"site":"cluster", ...}.
func parseJSON(data []byte, name string) (*Assignment, error) {
	f := jsonFile{data, name}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, f.syntaxErr(err, 0)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, f.errAt(dec.InputOffset(), "want a JSON object, {\"clusters\": [...]} or {\"site\": \"cluster\", ...}")
	}
	var entries []jsonEntry
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, f.syntaxErr(err, dec.InputOffset())
		}
		key, _ := tok.(string)
		off := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, f.syntaxErr(err, off)
		}
		// The value starts after the colon and any space.
		start := off
		for start < int64(len(data)) && (data[start] == ':' || data[start] == ' ' || data[start] == '\t' || data[start] == '\n' || data[start] == '\r') {
			start++
		}
		entries = append(entries, jsonEntry{key, raw, start})
	}
	if _, err := dec.Token(); err != nil {
		return nil, f.syntaxErr(err, dec.InputOffset())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, f.errAt(dec.InputOffset(), "unexpected data after the JSON object")
	}

	for _, e := range entries {
		if e.key == "clusters" && len(e.raw) > 0 && e.raw[0] == '[' {
			return f.parseClusters(entries)
		}
	}
	return f.parseFlat(entries)
}

// parseClusters reads the {"clusters": [...]} form. Keys source, method,
// threshold and m, which WriteJSON adds, are ignored.
func (f jsonFile) parseClusters(entries []jsonEntry) (*Assignment, error) {
	clusters, err := f.clustersEntry(entries)
	if err != nil {
		return nil, err
	}
	a := &Assignment{Source: f.name}
	dec := json.NewDecoder(bytes.NewReader(clusters.raw))
	dec.UseNumber()
	r := &clusterReader{f: f, dec: dec, start: clusters.start, sites: make(map[string]string)}
	if err := r.want('[', "a list of clusters"); err != nil {
		return nil, err
	}
	names := make(map[string]int)
	for dec.More() {
		c, startLine, err := r.cluster()
		if err != nil {
			return nil, err
		}
		if prev, ok := names[c.Name]; ok {
			return nil, errAt(f.name, startLine, 0, "cluster %q listed twice (lines %d and %d)", c.Name, prev, startLine)
		}
		names[c.Name] = startLine
		a.Clusters = append(a.Clusters, c)
	}
	if len(a.Clusters) == 0 {
		return nil, f.errAt(clusters.start, "no clusters")
	}
	return a, nil
}

// clustersEntry returns the "clusters" entry of the top-level object
// after checking that no key is repeated or unknown.
func (f jsonFile) clustersEntry(entries []jsonEntry) (jsonEntry, error) {
	var clusters jsonEntry
	seenKey := make(map[string]bool)
	for _, e := range entries {
		if seenKey[e.key] {
			return jsonEntry{}, f.errAt(e.start, "key %q given twice", e.key)
		}
		seenKey[e.key] = true
		switch e.key {
		case "clusters":
			clusters = e
		case "source", "method", "threshold", "m":
		default:
			return jsonEntry{}, f.errAt(e.start, "unknown key %q; a clusters file has keys clusters, source, method, threshold and m", e.key)
		}
	}
	return clusters, nil
}

// clusterReader reads the list of clusters token by token, so that its
// errors name the line. The list is valid JSON, so Token fails only on a
// wrong shape.
type clusterReader struct {
	f     jsonFile
	dec   *json.Decoder
	start int64 // offset of the list in the file
	// sites maps each site read so far to its cluster.
	sites map[string]string
}

// at returns the file offset the decoder has reached.
func (r *clusterReader) at() int64 { return r.start + r.dec.InputOffset() }

// want reads the delimiter d, described by what in the error.
func (r *clusterReader) want(d json.Delim, what string) error {
	tok, err := r.dec.Token()
	if err != nil {
		return r.f.syntaxErr(err, r.at())
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return r.f.errAt(r.at(), "want %s", what)
	}
	return nil
}

// cluster reads one {"name": ..., "sites": [...]} object and returns it
// with the line it starts on.
func (r *clusterReader) cluster() (Cluster, int, error) {
	f, dec := r.f, r.dec
	if err := r.want('{', `a cluster {"name": ..., "sites": [...]}`); err != nil {
		return Cluster{}, 0, err
	}
	startLine := f.line(r.at())
	var c Cluster
	hasName, hasSites := false, false
	for dec.More() {
		tok, _ := dec.Token()
		key, _ := tok.(string)
		switch key {
		case "name":
			if hasName {
				return Cluster{}, 0, f.errAt(r.at(), "key \"name\" given twice")
			}
			hasName = true
			tok, err := dec.Token()
			if err != nil {
				return Cluster{}, 0, f.syntaxErr(err, r.at())
			}
			name, ok := text(tok)
			if !ok {
				return Cluster{}, 0, f.errAt(r.at(), "cluster name must be a string or a number")
			}
			c.Name = name
		case "sites":
			if hasSites {
				return Cluster{}, 0, f.errAt(r.at(), "key \"sites\" given twice")
			}
			hasSites = true
			if err := r.siteList(&c); err != nil {
				return Cluster{}, 0, err
			}
		default:
			return Cluster{}, 0, f.errAt(r.at(), "unknown key %q in a cluster; want name and sites", key)
		}
	}
	if err := r.want('}', "end of the cluster"); err != nil {
		return Cluster{}, 0, err
	}
	switch {
	case !hasName || c.Name == "":
		return Cluster{}, 0, errAt(f.name, startLine, 0, "a cluster has no name")
	case !hasSites || len(c.Sites) == 0:
		return Cluster{}, 0, errAt(f.name, startLine, 0, "cluster %q has no sites", c.Name)
	}
	return c, startLine, nil
}

// siteList reads a cluster's list of sites into c.Sites, rejecting a site
// already read (in c or in another cluster). c.Name is the name read so
// far, which the errors quote.
func (r *clusterReader) siteList(c *Cluster) error {
	f, dec := r.f, r.dec
	if err := r.want('[', "a list of sites"); err != nil {
		return err
	}
	c.Sites = []string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return f.syntaxErr(err, r.at())
		}
		site, ok := text(tok)
		if !ok {
			return f.errAt(r.at(), "site must be a string or a number")
		}
		if site == "" {
			return f.errAt(r.at(), "empty site name")
		}
		if prev, ok := r.sites[site]; ok {
			if prev == c.Name {
				return f.errAt(r.at(), "site %q listed twice in cluster %q", site, c.Name)
			}
			return f.errAt(r.at(), "site %q assigned to clusters %q and %q", site, prev, c.Name)
		}
		r.sites[site] = c.Name
		c.Sites = append(c.Sites, site)
	}
	return r.want(']', "end of the list of sites")
}

// parseFlat reads the {"site": "cluster", ...} form.
func (f jsonFile) parseFlat(entries []jsonEntry) (*Assignment, error) {
	if len(entries) == 0 {
		return nil, f.errAt(0, "no sites")
	}
	a := &Assignment{Source: f.name}
	byName := make(map[string]int)
	lines := make(map[string]int)
	for _, e := range entries {
		site := strings.TrimSpace(e.key)
		ln := f.line(e.start)
		if site == "" {
			return nil, errAt(f.name, ln, 0, "empty site name")
		}
		if prev, ok := lines[site]; ok {
			return nil, errAt(f.name, ln, 0, "site %q listed twice (lines %d and %d)", site, prev, ln)
		}
		lines[site] = ln
		dec := json.NewDecoder(bytes.NewReader(e.raw))
		dec.UseNumber()
		tok, _ := dec.Token()
		cl, ok := text(tok)
		if !ok {
			return nil, errAt(f.name, ln, 0, "cluster of site %q must be a string or a number", site)
		}
		if cl == "" {
			return nil, errAt(f.name, ln, 0, "site %q has an empty cluster name", site)
		}
		k, ok := byName[cl]
		if !ok {
			k = len(a.Clusters)
			byName[cl] = k
			a.Clusters = append(a.Clusters, Cluster{Name: cl})
		}
		a.Clusters[k].Sites = append(a.Clusters[k].Sites, site)
	}
	return a, nil
}
