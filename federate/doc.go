// Package federate runs Algorithm 1 over hospitals that keep their rows:
// the round protocol of a federated job, the folding of site messages on
// the coordinator, and the checks that refuse a message that does not
// belong.
//
// Everything the backward pass needs from a site is a sum over that site's
// rows. At round r the job solves step h = H - r: each site sends its Gram
// at step h (which does not depend on V), the right-hand side
// sum phi(s,a) (r + Vhat_{h+1}(s')) of every run it belongs to (Vhat_{h+1}
// from the step-(h+1) coefficients the job carries), its action counts for
// the behaviour fallback and its trajectory count. Both sides run package
// solve's one backward pass: a site forms its right-hand sides with the
// in-process pass's own sweeps over its rows ([solve.Round].RHS), and the
// coordinator plans the job as a central solve does ([solve.PlanFor]) and
// solves each step from the sites' sums, in the central solve's site order,
// with the same [solve.Round] ([solve.Round].Solve), so H rounds give the
// central policy bit for bit. The behaviour fallback's last level, the
// most frequent action over all steps for a step without counts, is known
// once every step is folded: the state keeps each step's counts per action
// (sums of the released counts, so nothing more is disclosed) and the
// policy's tables are completed from them ([solve.CompleteBehaviour]).
// Disclosure control ([solve.Disclosure]) is applied at the site, through
// the same mask a central solve under the same thresholds uses.
//
// Every feature map runs in rounds, with explicit cut points for the
// binned maps (quantile cut points are over every site's rows: refused).
// A precomputed map's blocks are found from the rows: each site sends its
// partition in round 0 and the coordinator keeps their join, the blocks of
// all the rows. A stationary job's messages carry every step's Gram, which
// the coordinator adds as the central stationary factor does (the
// round's stationary settings). Weighted rows send weighted sums; disclosure
// control counts rows.
//
// After the H solve rounds, the value round (round H, value.go) collects
// each site's sum of Vhat_1 over its step-1 rows, its decisions without
// evidence and its coverage, from which the coordinator forms the value
// estimate and solve's diagnostics ([Diagnose]). A finished job can then
// evaluate a policy in H + 1 evaluation rounds (eval.go): the backward
// passes of [eval.FromData] solved step by step from the sites' Grams and
// right-hand sides, the robust identification bounds from per-cell sums,
// and each site's own results computed at the site.
//
// Files: the job (job.json: settings, feature map, sites, thresholds) and
// its state (state.json: the round, the coefficients solved so far, the
// provenance of every folded message) are JSON; a site message is Parquet
// (package io/msgio) with its header as metadata. Each carries
// format_version. A step writes state.json atomically, after every check,
// so a refused message leaves the job as it was.
//
// # A coordinator's step
//
// [New] and [Create] make a job; each round, [BeginStep] takes the job's
// lock and loads it, and [Advance] folds the round's messages (the shape
// round's, or a step's or the value round's) and saves what they decide.
// [Play] plays every round in one place, through the [Parts] a program
// gives it (each site's part, then the step); [Local] plays each part as a
// separate process of the grmdp program. [Incoming.WriteText] says
// what a message discloses, in words, for the data steward who releases
// it. A vantage6 task carries the job and its state to a node as a [Task].
package federate
