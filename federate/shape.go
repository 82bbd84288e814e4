package federate

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// KindShape is the kind of the shape round's messages: before round 0 of
// a job made without some of its sizes, each site sends its largest step,
// action and state, and the coordinator sets the job's sizes to the
// largest over the sites, the sizes a central solve finds from every row.
//
// A maximum is not a count, and the shape round releases no count, total
// or label: a site's message says only that some row of its data has
// that step, action or state. A data steward who would not release even
// that asks the coordinator to give the sizes at init. Text action labels
// are never asked for (a label used by one patient names that patient's
// treatment): a job whose sites' actions are text must list its labels at
// init, and a site whose data hold text actions refuses a job that lists
// none (ErrLabelsNeeded).
const KindShape = "shape"

// ErrLabelsNeeded marks a site whose data hold text actions in a job that
// lists no action labels.
var ErrLabelsNeeded = errors.New("federate: the data's actions are text labels and the job lists none (a site releases no label)")

// Sizes are a site's largest step (H), action + 1 (A) and, for the
// tabular map, state + 1 (S), after the job's rules.
type Sizes struct {
	H int `json:"H"`
	A int `json:"A"`
	S int `json:"S,omitempty"`
}

// ShapeInput is what a site's shape message is made of: its name, the
// sites its data hold, its data files' provenance, its sizes, and whether
// its actions are text labels.
type ShapeInput struct {
	Site      string
	DataSites []string
	Sources   []traj.Source
	Sizes     Sizes
	Labelled  bool
}

// ShapeMessage returns a site's message for the job's shape round.
func ShapeMessage(j *Job, s *State, in ShapeInput) (*Message, error) {
	if !j.ShapeOpen() {
		return nil, refusef("job %s's sizes are set: it has no shape round", j.ID)
	}
	if !contains(j.Sites, in.Site) {
		return nil, refusef("site %q is not one of job %s's sites %v", in.Site, j.ID, j.Sites)
	}
	if len(in.DataSites) != 1 || in.DataSites[0] != in.Site {
		return nil, refusef("the data hold sites %v; a site's part reads only its own rows, of site %q", in.DataSites, in.Site)
	}
	if in.Labelled && j.Rules.ActionLabels == nil {
		return nil, ErrLabelsNeeded
	}
	sz := in.Sizes
	sz.H, sz.A, sz.S = asked(j, AskH, sz.H), asked(j, AskA, sz.A), asked(j, AskS, sz.S)
	// The data files are named without their rows: the round releases no
	// count.
	var sources []traj.Source
	for _, src := range in.Sources {
		src.Rows = 0
		sources = append(sources, src)
	}
	m := &Message{FormatVersion: FormatVersion, JobID: j.ID, Round: s.Round, Kind: KindShape, Site: in.Site, Map: j.Map,
		Disclosure: j.Disclosure, Sources: sources, Shape: &sz}
	m.seal()
	return m, nil
}

// asked returns v when the job asks for size x, else 0 (a size the job
// fixes is not sent).
func asked(j *Job, x string, v int) int {
	if j.Asks(x) {
		return v
	}
	return 0
}

// checkShapeHeader checks a shape message's header.
func checkShapeHeader(m *Message) error {
	sz := m.Shape
	switch {
	case sz == nil:
		return fmt.Errorf("a shape message without sizes")
	case sz.H < 0 || sz.A < 0 || sz.S < 0 || sz.A > maxActions || sz.S > maxFeatures || sz.H > maxFeatures:
		return fmt.Errorf("sizes H = %d, A = %d, S = %d", sz.H, sz.A, sz.S)
	case m.Round != 0 || m.Step != 0 || m.Trajectories != 0 || m.Rows != 0 || m.StepRows != 0 || m.Suppressed != 0:
		return fmt.Errorf("a shape message with a round, step or totals")
	}
	if _, err := m.Map.Kind.MarshalText(); err != nil {
		return fmt.Errorf("the feature map's kind: %v", err)
	}
	return nil
}

// foldShape checks the shape round's messages (every site exactly once,
// for this job) and returns the job with the asked sizes set to the
// largest over the sites; its id, settings and sites are unchanged. Any
// refusal wraps ErrRefused.
func foldShape(j *Job, s *State, in []Incoming) (*Job, error) {
	if !j.ShapeOpen() {
		return nil, refusef("job %s's sizes are set: it has no shape round", j.ID)
	}
	bySite := map[string]*Incoming{}
	var sz Sizes
	for i := range in {
		m, name := in[i].Msg, in[i].File
		switch {
		case m.JobID != j.ID:
			return nil, refusef("%s: message for job %s, this is job %s", name, m.JobID, j.ID)
		case m.Kind != KindShape:
			return nil, refusef("%s: a message of a %s round (round %d), the job is at its shape round", name, kindName(m.Kind), m.Round)
		case !contains(j.Sites, m.Site):
			return nil, refusef("%s: message from site %q, which is not one of the job's sites %v", name, m.Site, j.Sites)
		case bySite[m.Site] != nil:
			return nil, refusef("%s: site %q sent twice this round (also %s)", name, m.Site, bySite[m.Site].File)
		case !sameMap(&m.Map, &j.Map):
			return nil, refusef("%s: message for a %s map, the job's is %s", name, m.Map.Kind, j.Map.Kind)
		case m.Shape.H < 1 && j.Asks(AskH) || m.Shape.A < 1 && j.Asks(AskA) || m.Shape.S < 1 && j.Asks(AskS):
			return nil, refusef("%s: site %q sent no size (H = %d, A = %d, S = %d): it has no rows", name, m.Site, m.Shape.H, m.Shape.A, m.Shape.S)
		}
		bySite[m.Site] = &in[i]
		sz.H, sz.A, sz.S = max(sz.H, m.Shape.H), max(sz.A, m.Shape.A), max(sz.S, m.Shape.S)
	}
	var missing []string
	for _, site := range j.Sites {
		if bySite[site] == nil {
			missing = append(missing, site)
		}
	}
	if len(missing) > 0 {
		return nil, refusef("shape round: no message from site %v", missing)
	}
	nj := *j
	nj.Ask = nil
	if j.Asks(AskH) {
		nj.H = sz.H
	}
	if j.Asks(AskA) {
		nj.Map.A = sz.A
	}
	if j.Asks(AskS) {
		nj.Map.S = sz.S
	}
	if nj.Map.Kind != features.Tabular {
		nj.Map.S = j.Map.S
	}
	nj.Sites = slices.Clone(j.Sites)
	if err := nj.Check(); err != nil {
		return nil, err
	}
	return &nj, nil
}

// setShape replaces the job in dir by nj, the job its shape round
// decided, with a fresh state before round 0.
func setShape(dir string, j, nj *Job) error {
	if nj.ID != j.ID || !j.ShapeOpen() || nj.ShapeOpen() {
		return fmt.Errorf("federate: job %s: not the sizes of its shape round", j.ID)
	}
	if err := writeJSON(filepath.Join(dir, JobFile), nj); err != nil {
		return err
	}
	return SaveState(dir, NewState(nj))
}
