// Package cluster turns a user's similarity file into site groups for
// cluster-level pooling (paper, section 3.3): sites known a priori to share
// similar MDPs are partitioned into clusters C_1..C_M, and the solver treats
// each cluster, its sites' data pooled, as one group.
//
// [Load] and [Parse] read a file and return an [Assignment], a partition of
// the file's sites into named clusters; [Assignment.Groups] maps it onto the
// sites of a data set; [Assignment.WriteJSON] writes it in a form Load reads
// back.
//
// # Input forms
//
// Sites are strings; an integer site in a file is just its decimal text, so
// "7" and "07" are different sites. Names and values are trimmed of
// surrounding space. The file name's extension picks the syntax: ".json" is
// JSON; ".csv", ".tsv" (tab-separated) and ".txt" are delimited text; with
// any other name the content is JSON if it starts with '{'. Delimited text
// is split at whichever of comma, tab and semicolon is most frequent on its
// first line (ties go to the comma); with semicolons, a number may use a
// decimal comma ("0,5"). A leading UTF-8 byte order mark, blank lines and
// rows of empty fields are skipped.
//
// An assignment names each site's cluster:
//
//   - CSV rows "site,cluster". The first row is a header when, in any
//     case, its first cell is site, sites, site_id, siteid, "site id",
//     site_name, hospital, hospital_id or id, or its second is cluster,
//     clusters, cluster_id, clusterid, "cluster id", cluster_name, group or
//     group_id; or when its site is not an integer but every other row's
//     site is.
//   - JSON {"clusters": [{"name": "c1", "sites": ["a", "b"]}, ...]}, the form
//     WriteJSON writes (its keys source, method, threshold and m are
//     ignored on reading).
//   - JSON {"a": "c1", "b": "c1", "c": "c2"}.
//
// Sites and cluster names in JSON may be strings or numbers. Cluster names
// come from the file.
//
// Similarities are one of:
//
//   - A square matrix CSV with site names in the header row and in the first
//     column (the header's first cell may be empty or any label). Rows may
//     come in any order, but the first column must name the header's sites.
//     Every cell, the unused diagonal included, must be a number, and the
//     matrix must be symmetric to a relative tolerance of 1e-12; the mean of
//     the two cells is used.
//   - An edge list CSV "site_a,site_b,similarity". The first row is a header
//     when its similarity is not a number. Pairs are unordered; a pair may
//     repeat only with the same value. A row "a,a,x" declares site a
//     without linking it. Pairs the list does not name have similarity 0,
//     for both methods below: an edge list is a sparse matrix.
//
// The forms are told apart by the first row: two fields is an assignment;
// three is an edge list, unless the file is exactly a 2-site matrix (three
// rows whose first cells repeat the header's last two, with numbers
// elsewhere); an empty first cell or four or more fields is a matrix.
//
// Similarities may be any finite numbers, negative or above 1 included
// (correlations, kernel values, negated distances); only their order and,
// for average linkage, their averages matter (with an edge list, relative
// to the 0 that unnamed pairs get). Higher means more alike. Parse reads
// the whole file into memory: similarity files are small, and clustering
// needs every pair.
//
// # From similarities to clusters
//
// Similarities need exactly one of the two methods in [Options]; an
// assignment takes neither.
//
//   - Threshold T: the clusters are the connected components of the graph
//     with an edge between two sites whose similarity is at least T. With an
//     edge list and T <= 0, unnamed pairs (similarity 0) are edges too.
//   - M clusters: agglomerative clustering with average linkage. Starting
//     from one cluster per site, merge the two clusters with the highest
//     average similarity over their pairs of sites, until M are left. Ties go
//     to the pair whose first cluster has the smallest site in canonical
//     order, then whose second has. Time is O(n^3) at worst and memory
//     O(n^2) for n sites.
//
// Computed clusters are named c1..cM in canonical order.
//
// # Canonical order
//
// Sites sort numerically if every site name parses as a base-10 integer,
// and as strings otherwise ([SortSites]); the data side orders its sites
// the same way. Within a cluster sites are sorted, and clusters are sorted
// by their smallest site. Every Assignment this package returns is in
// canonical order, so its JSON is stable.
//
// # Mapping onto data
//
// [Assignment.Groups] returns index groups into the data's own site list,
// ordered by smallest index. A data site the file does not assign is an
// error wrapping [ErrMissingSite], or with allowSingletons a group of its
// own and a warning. File sites with no data are warnings; clusters left
// with no data sites are dropped, with a warning.
//
// # Errors
//
// A bad file gives an error wrapping [ErrBadSimilarity]; where it can be
// placed it is a *[ParseError] naming the file, the 1-based line and, for
// CSV, the 1-based column (field). Options that do not fit the file (both
// methods, neither for similarities, either for an assignment, a
// non-finite threshold, M above the number of sites) wrap [ErrOptions].
// Messages are lowercase with no trailing punctuation.
package cluster
