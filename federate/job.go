package federate

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// FormatVersion is the version of the job, state and message formats this
// package reads and writes.
const FormatVersion = 2

// File names inside a job directory.
const (
	JobFile    = "job.json"
	StateFile  = "state.json"
	PolicyFile = "policy.parquet"
)

// ErrRefused marks a job, state or message that the protocol refuses: for
// another job, round or site, repeated, missing, corrupted or of another
// format version.
var ErrRefused = errors.New("refused")

// ErrJobExists marks a directory that already holds a job (Create never
// replaces one).
var ErrJobExists = errors.New("federate: the directory already holds a job")

type jobExistsError struct{ dir string }

func (e *jobExistsError) Error() string {
	return fmt.Sprintf("federate: %s already holds a job: start a new job in a new directory", e.dir)
}
func (e *jobExistsError) Unwrap() error { return ErrJobExists }

func refusef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// Columns names the trajectory contract's columns at every site.
type Columns struct {
	Site   string `json:"site"`
	Traj   string `json:"traj"`
	Step   string `json:"step"`
	Action string `json:"action"`
	Reward string `json:"reward"`
}

// Cluster is one group of the cluster method.
type Cluster struct {
	Name  string   `json:"name"`
	Sites []string `json:"sites"`
}

// NamedClusters returns the clusters of the given groups of sites
// (indices into sites), named by names.
func NamedClusters(groups [][]int, names, sites []string) []Cluster {
	var out []Cluster
	for i, g := range groups {
		cl := Cluster{Name: names[i]}
		for _, k := range g {
			cl.Sites = append(cl.Sites, sites[k])
		}
		out = append(out, cl)
	}
	return out
}

// Job is what the coordinator fixes before the first round and never
// changes: the method and its settings, the feature map with every size
// (H, A, S or p), the expected sites and the privacy thresholds.
type Job struct {
	FormatVersion int              `json:"format_version"`
	ID            string           `json:"id"`
	Method        solve.Method     `json:"method"`
	Map           features.Map     `json:"feature_map"`
	H             int              `json:"H"`
	Lambda        float64          `json:"lambda"`
	C             float64          `json:"c"`
	Xi            float64          `json:"xi"`
	Beta          float64          `json:"beta"`
	BetaGiven     bool             `json:"beta_given"`
	Fallback      solve.Fallback   `json:"fallback"`
	Columns       Columns          `json:"columns"`
	Sites         []string         `json:"sites"`
	Clusters      []Cluster        `json:"clusters,omitempty"`
	Disclosure    solve.Disclosure `json:"disclosure"`
	MinSites      int              `json:"min_sites"`
	// Settings records the command line that made the job (provenance).
	Settings map[string]string `json:"settings,omitempty"`
	// Stationary is solve's --stationary: each group's Lambda sums every
	// step's Grams, and each round's right-hand side every step's rows.
	Stationary bool `json:"stationary,omitempty"`
	// Rules are how every site reads its rows.
	Rules Rules `json:"rules"`
	// Ask lists the sizes the sites' shape round decides ("H", "A", "S"):
	// while it is not empty, the job's next round is the shape round, and
	// those sizes are 0.
	Ask []string `json:"ask,omitempty"`
}

// Rules are the data rules every site of a job reads its rows under, so
// that no site has a flag to remember: the steps' numbering, what a NULL
// does, and the action labels.
type Rules struct {
	// FirstStep is "0", "1" or "detect" (traj.ParseFirstStep); "" reads
	// steps as numbered from 1.
	FirstStep string `json:"first_step,omitempty"`
	// Nulls is "error", "truncate" or "drop-episode"
	// (traj.ParseNullPolicy); "" is "error".
	Nulls string `json:"nulls,omitempty"`
	// ActionLabels, when not nil, are the text actions in the central
	// solve's order (sorted), A of them; nil: integer actions 0..A-1.
	ActionLabels []string `json:"action_labels,omitempty"`
}

// RuleError is a site's data breaking one of the job's rules: Rule is
// "first-step", "nulls" or "action-labels", the field of Rules it breaks
// (as the job's JSON names it, with a hyphen), and Err what is wrong.
type RuleError struct {
	Rule string
	Err  error
}

func (e *RuleError) Error() string { return e.Err.Error() }
func (e *RuleError) Unwrap() error { return e.Err }

// Steps returns how the job's steps are numbered.
func (r Rules) Steps() (traj.FirstStep, error) {
	if r.FirstStep == "" {
		return traj.StepsFrom1, nil
	}
	return traj.ParseFirstStep(r.FirstStep)
}

// NullPolicy returns what a NULL does at every site.
func (r Rules) NullPolicy() (traj.NullPolicy, error) {
	if r.Nulls == "" {
		return traj.NullsError, nil
	}
	return traj.ParseNullPolicy(r.Nulls)
}

// Sizes the shape round can ask for.
const (
	AskH = "H"
	AskA = "A"
	AskS = "S"
)

// Asks reports whether the shape round decides size x.
func (j *Job) Asks(x string) bool { return slices.Contains(j.Ask, x) }

// ShapeOpen reports whether the job's shape round is still to be folded.
func (j *Job) ShapeOpen() bool { return len(j.Ask) > 0 }

// Rounds returns the number of message rounds of the job: one per step,
// then the value round (round H), in which the sites send their sums of
// Vhat_1 and the diagnostics' counts.
func (j *Job) Rounds() int { return j.H + 1 }

// StepOf returns the step round r solves: 0 for the value round.
func (j *Job) StepOf(r int) int { return j.H - r }

// ValueRound reports whether round r is the value round.
func (j *Job) ValueRound(r int) bool { return r == j.H }

// Check validates a job's settings; an empty or repeated site is a
// [*SettingError] on Sites, as [New] refuses it.
func (j *Job) Check() error {
	if j.FormatVersion != FormatVersion {
		return refusef("job format_version %d, this grmdp reads %d", j.FormatVersion, FormatVersion)
	}
	if j.ID == "" {
		return refusef("job has no id")
	}
	if _, err := solve.ParseMethod(string(j.Method)); err != nil {
		return refusef("job: %v", err)
	}
	if err := j.checkSizes(); err != nil {
		return err
	}
	if !(j.Lambda > 0) {
		return fmt.Errorf("federate: lambda must be positive, got %v", j.Lambda)
	}
	if j.MinSites < 1 {
		return fmt.Errorf("federate: min-sites must be at least 1, got %d", j.MinSites)
	}
	if len(j.Sites) < j.MinSites {
		return fmt.Errorf("federate: %d sites %v, fewer than the job's minimum of %d", len(j.Sites), j.Sites, j.MinSites)
	}
	if err := checkSites(j.Sites); err != nil {
		return err
	}
	if j.Method == solve.Cluster {
		if len(j.Clusters) == 0 {
			return fmt.Errorf("federate: the cluster method needs clusters")
		}
		in := map[string]bool{}
		for _, c := range j.Clusters {
			for _, s := range c.Sites {
				if !slices.Contains(j.Sites, s) {
					return fmt.Errorf("federate: cluster %s names site %q, which is not one of the job's sites", c.Name, s)
				}
				if in[s] {
					return fmt.Errorf("federate: site %q is in two clusters", s)
				}
				in[s] = true
			}
		}
		for _, s := range j.Sites {
			if !in[s] {
				return fmt.Errorf("federate: site %q is in no cluster", s)
			}
		}
	}
	if j.Disclosure.MinCount < 0 || j.Disclosure.MinRows < 0 {
		return fmt.Errorf("federate: disclosure thresholds must not be negative")
	}
	return nil
}

// checkSizes checks H, A and the map, allowing the sizes the shape round
// still has to decide to be 0, and the job's data rules.
func (j *Job) checkSizes() error {
	for _, x := range j.Ask {
		if x != AskH && x != AskA && x != AskS {
			return refusef("job asks the sites for %q, not one of H, A, S", x)
		}
	}
	m := j.Map
	H := j.H
	if j.Asks(AskH) {
		H = max(H, 1)
	}
	if j.Asks(AskA) {
		m.A = max(m.A, 1)
	}
	if j.Asks(AskS) {
		m.S = max(m.S, 1)
	}
	if H < 1 || m.A < 1 {
		return fmt.Errorf("federate: the job needs the horizon H and the number of actions A, got H = %d, A = %d", j.H, j.Map.A)
	}
	if err := checkMap(&m); err != nil {
		return err
	}
	r := j.Rules
	if _, err := r.Steps(); err != nil {
		return refusef("job's first step: %v", err)
	}
	if _, err := r.NullPolicy(); err != nil {
		return refusef("job's null policy: %v", err)
	}
	if r.ActionLabels != nil {
		if !j.Asks(AskA) && len(r.ActionLabels) != j.Map.A {
			return refusef("job has %d action labels for A = %d", len(r.ActionLabels), j.Map.A)
		}
		if !slices.IsSorted(r.ActionLabels) || len(slices.Compact(slices.Clone(r.ActionLabels))) != len(r.ActionLabels) || slices.Contains(r.ActionLabels, "") {
			return refusef("job's action labels %q are not distinct, non-empty and sorted", r.ActionLabels)
		}
	}
	return nil
}

// newID returns a fresh random job id.
func newID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// Create writes a new job and its round-0 state to dir (created if
// missing; an existing job there is refused).
func Create(dir string, j *Job) error {
	if err := j.Check(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, JobFile)); err == nil {
		return &jobExistsError{dir}
	}
	if err := writeJSON(filepath.Join(dir, JobFile), j); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, StateFile), NewState(j))
}

// Load reads a job directory's job and state and checks that they belong
// together.
func Load(dir string) (*Job, *State, error) {
	j := &Job{}
	if err := readJSON(filepath.Join(dir, JobFile), j); err != nil {
		return nil, nil, err
	}
	if err := j.Check(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, JobFile), err)
	}
	s := &State{}
	if err := readJSON(filepath.Join(dir, StateFile), s); err != nil {
		return nil, nil, err
	}
	if err := s.check(j); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	return j, s, nil
}

// SaveState replaces the job's state atomically.
func SaveState(dir string, s *State) error {
	return writeJSON(filepath.Join(dir, StateFile), s)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}

// writeAtomic replaces the file at path with b atomically.
func writeAtomic(path string, b []byte) error {
	f, err := fileio.CreateAtomic(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(b); err != nil {
		return err
	}
	return f.Commit()
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return refusef("%s: not a valid job file: %v", path, err)
	}
	return nil
}

// State is the coordinator's state between rounds.
type State struct {
	FormatVersion int    `json:"format_version"`
	JobID         string `json:"job_id"`
	// Round is the next round to fold (0..H); Round = H: done.
	Round int `json:"round"`
	// Order holds the sites in the central solve's order (numeric when
	// every site's column is an integer column, lexical otherwise), set by
	// round 0; Numeric says which.
	Order   []string `json:"order,omitempty"`
	Numeric bool     `json:"numeric,omitempty"`
	// Trajectories and Rows per site in Order (round 0).
	Trajectories []int `json:"trajectories,omitempty"`
	Rows         []int `json:"rows,omitempty"`
	// Blocks, for a precomputed map, labels each feature's block: the
	// join of the sites' partitions of round 0 (see joinBlocks), the
	// blocks a central solve finds from every row at once.
	Blocks []int32 `json:"blocks,omitempty"`
	// Runs holds the backward passes solved so far; Runs[i].Steps[h-1] is
	// set once step h's round is folded.
	Runs []Run `json:"runs,omitempty"`
	// Behaviour[h-1] is step h's behaviour fallback table as its round
	// folds it, and BehaviourActions[h-1] the step's counts per action
	// (the sites' released counts summed): once every step is folded, a
	// step without counts takes the most frequent action over all steps
	// (solve.CompleteBehaviour). BehaviourActions is nil in the state of a
	// job begun before the state kept it; its tables stay as folded.
	Behaviour        [][]int32   `json:"behaviour,omitempty"`
	BehaviourActions [][]float64 `json:"behaviour_action_counts,omitempty"`
	// Evidence[h-1] is step h's evidence counts, for the maps that have
	// them (see evidence.go).
	Evidence [][]float64 `json:"evidence_counts,omitempty"`
	// Messages records every folded message's provenance.
	Messages []Provenance `json:"messages,omitempty"`
	// Value holds the value round's sums (see value.go).
	Value *ValueSums `json:"value,omitempty"`
}

// Run is one backward pass of the job: its groups (site names), penalty
// scale and coefficients per step.
type Run struct {
	Name   string            `json:"name"`
	Groups [][]string        `json:"groups"`
	PEVI   bool              `json:"pevi"`
	Beta   float64           `json:"beta"`
	Steps  []*solve.StepCoef `json:"steps"`
	// Cond[h-1] holds each group's condition number of Lambda_h (a
	// diagnostic; see solve.Factor.Cond).
	Cond [][]float64 `json:"cond,omitempty"`
}

// Provenance identifies a folded message.
type Provenance struct {
	Round    int    `json:"round"`
	Site     string `json:"site"`
	File     string `json:"file"`
	SHA256   string `json:"sha256"`
	Checksum string `json:"checksum"`
	Bytes    int64  `json:"bytes"`
	// StepRows is the number of rows the message's sums are over.
	StepRows float64 `json:"step_rows"`
	// Sources are the site's data files (base name, size, fingerprint,
	// rows).
	Sources []traj.Source `json:"sources,omitempty"`
}

// NewState returns a job's state before round 0.
func NewState(j *Job) *State {
	return &State{FormatVersion: FormatVersion, JobID: j.ID}
}

// Done reports whether every round is folded.
func (s *State) Done(j *Job) bool { return s.Round >= j.Rounds() }

func (s *State) check(j *Job) error {
	if s.FormatVersion != FormatVersion {
		return refusef("state format_version %d, this grmdp reads %d", s.FormatVersion, FormatVersion)
	}
	if s.JobID != j.ID {
		return refusef("state of job %s beside job %s", s.JobID, j.ID)
	}
	if s.Round < 0 || s.Round > j.Rounds() {
		return refusef("state at round %d, outside 0..%d", s.Round, j.Rounds())
	}
	if s.BehaviourActions != nil && len(s.BehaviourActions) != j.H {
		return refusef("state: action counts for %d steps, want %d", len(s.BehaviourActions), j.H)
	}
	if s.Round > 0 {
		if len(s.Order) != len(j.Sites) || len(s.Trajectories) != len(j.Sites) || len(s.Runs) == 0 && j.Method != solve.Behaviour {
			return refusef("state at round %d lacks round 0's sites or runs", s.Round)
		}
		last := min(s.Round, j.H) - 1 // the last solve round folded
		for _, r := range s.Runs {
			if len(r.Steps) != j.H {
				return refusef("state: run %s has %d steps, want %d", r.Name, len(r.Steps), j.H)
			}
			if c := r.Steps[j.StepOf(last)-1]; c == nil {
				return refusef("state: run %s lacks step %d", r.Name, j.StepOf(last))
			}
		}
	}
	return nil
}
