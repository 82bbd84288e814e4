package federate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Parts play the parts of a job's round: each site's, then the
// coordinator's. A program that plays a whole job in one place (as
// separate processes, or in this one) gives them to [Play] and
// [PlayEval].
type Parts interface {
	// Site writes site i of job j's message for the job's current round
	// to the file out.
	Site(ctx context.Context, j *Job, i int, out string) error
	// Step folds the round's messages, one per site in the job's order,
	// into the job.
	Step(ctx context.Context, j *Job, msgs []string) error
}

// Play plays the rounds of the job in the directory dir until it is
// done: the shape round when the job has one, then every step's round and
// the value round. Each round's messages are written to a directory of
// its own under msgDir (shape, round-000, round-001, ...). An error
// names the part and the round it stopped at.
func Play(ctx context.Context, dir, msgDir string, p Parts) error {
	j, s, err := Load(dir)
	if err != nil {
		return err
	}
	for !s.Done(j) {
		// The shape round, when the job has it, is round -1: it leaves
		// the job with its sizes set, before round 0.
		r, label, roundDir := s.Round, fmt.Sprintf("round %d", s.Round+1), filepath.Join(msgDir, fmt.Sprintf("round-%03d", s.Round))
		if j.ShapeOpen() {
			r, label, roundDir = -1, "shape round", filepath.Join(msgDir, "shape")
		}
		if err := playRound(ctx, j, roundDir, label, p); err != nil {
			return err
		}
		if j, s, err = Load(dir); err != nil {
			return err
		}
		if s.Round != r+1 {
			return fmt.Errorf("federate: the step of round %d left the job at round %d", r+1, s.Round)
		}
	}
	return nil
}

// PlayEval plays the rounds of the evaluation open on the finished job in
// the directory dir, as Play plays the job's (messages in
// msgDir/eval-round-000, ...).
func PlayEval(ctx context.Context, dir, msgDir string, p Parts) error {
	j, _, err := Load(dir)
	if err != nil {
		return err
	}
	for r := 0; r <= j.H; r++ {
		if err := playRound(ctx, j, filepath.Join(msgDir, fmt.Sprintf("eval-round-%03d", r)), fmt.Sprintf("evaluation round %d", r+1), p); err != nil {
			return err
		}
	}
	return nil
}

// playRound plays one round of job j (named label in errors): each site
// writes its message into roundDir, then the coordinator folds them.
func playRound(ctx context.Context, j *Job, roundDir, label string, p Parts) error {
	if err := os.MkdirAll(roundDir, 0o755); err != nil {
		return err
	}
	var msgs []string
	for i, site := range j.Sites {
		out := filepath.Join(roundDir, fmt.Sprintf("site-%03d.parquet", i))
		if err := p.Site(ctx, j, i, out); err != nil {
			return fmt.Errorf("site %s, %s: %w", site, label, err)
		}
		msgs = append(msgs, out)
	}
	if err := p.Step(ctx, j, msgs); err != nil {
		return fmt.Errorf("coordinator, %s: %w", label, err)
	}
	return nil
}
