package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// RowsFingerprint is the fingerprint of the rows read from sources under
// a null policy and a step numbering (shift, 1 for steps read as
// numbered from 0): the SHA-256, hex encoded, of the sources' file
// fingerprints in sorted order (each the SHA-256 of a file's size and
// Parquet footer: [traj.Source]), the null policy and the shift. The
// files fix the rows and the two rules fix which rows are read and how
// they are numbered, so equal fingerprints mean the same rows; it costs
// no read of the rows. The same rows copied into another file get
// another fingerprint.
func RowsFingerprint(sources []traj.Source, nulls traj.NullPolicy, shift int64) string {
	fps := make([]string, len(sources))
	for i, s := range sources {
		fps[i] = s.Fingerprint
	}
	slices.Sort(fps)
	h := sha256.New()
	for _, fp := range fps {
		fmt.Fprintf(h, "file %s\n", fp)
	}
	fmt.Fprintf(h, "nulls %s\nshift %d\n", nulls, shift)
	return hex.EncodeToString(h.Sum(nil))
}

// rowsFingerprint is the fingerprint of the rows a policy learned from
// them records: [RowsFingerprint] of the sources it records.
func (d *Data) rowsFingerprint(sources []traj.Source) string {
	var shift int64
	if d.opts.FirstStep == traj.StepsFrom0 || d.opts.zeroStepFile != "" || d.table != nil && d.table.ZeroStepFile != "" {
		shift = 1
	}
	return RowsFingerprint(sources, d.opts.Nulls, shift)
}

// record sets the fingerprint of the rows p was learned from.
func (d *Data) record(p *solve.Policy) {
	p.TrainedOn = d.rowsFingerprint(p.Sources)
}

// LearnedFrom reports whether p was learned from these data's rows, or
// from some of them, and says so in one line ("" when not): the rows'
// fingerprint equals the one p records, or some input file of the data
// (by content fingerprint) was an input of p. An evaluation on such rows
// is in-sample and optimistic.
func (d *Data) LearnedFrom(p *solve.Policy) (bool, string) {
	if d.table == nil {
		return false, ""
	}
	if p.TrainedOn != "" && p.TrainedOn == d.rowsFingerprint(d.table.Sources) {
		return true, "in-sample: the policy was learned from these rows, so this estimate is optimistic; grmdp validate evaluates on held-out rows"
	}
	learned := map[string]bool{}
	for _, s := range p.Sources {
		learned[s.Fingerprint] = true
	}
	var shared int
	for _, s := range d.table.Sources {
		if learned[s.Fingerprint] {
			shared++
		}
	}
	if shared > 0 {
		return true, fmt.Sprintf("in-sample: the policy was learned from %d of these %d input files, so this estimate is optimistic; grmdp validate evaluates on held-out rows", shared, len(d.table.Sources))
	}
	return false, ""
}
