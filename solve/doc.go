// Package solve learns group-robust policies from multi-site trajectory
// data: Algorithm 1 of the paper ("pessimistic site-wise ridge with
// feature-wise uncertainty", section 2.3) over any grouping of the sites,
// the PEVI baselines of section 4.1, behaviour cloning, and the quantities
// that evaluate and diagnose them (robust fitted-Q evaluation, Delta_h of
// section 3.3, evidence, penalty scale, coverage, conditioning).
//
// # What it computes
//
// Sites are partitioned into groups g (see [Problem]): one group per site
// for [Sitewise] (Algorithm 1 itself), one per cluster for [Cluster]
// (section 3.3: each cluster's sites pooled into a "super-site"), and one
// for all sites for [Pooled]. These are one code path with different
// groupings. With Vhat_{H+1} = 0, for h = H, ..., 1 and every group g,
// over the group's step-h rows tau (each counted with its weight when the
// table carries row weights):
//
//	Lambda_h^g = sum_tau phi(s_h, a_h) phi(s_h, a_h)^T + lambda I
//	nu_h^g     = (Lambda_h^g)^{-1} sum_tau phi(s_h, a_h) (r_h + Vhat_{h+1}(s_{h+1}))
//	w_h        = rowmin_g nu_h^g                      (coordinate-wise minimum)
//	m_h        = rowmax_g sqrt(diag((Lambda_h^g)^{-1}))  (coordinate-wise maximum)
//	Qbar_h     = phi(s, a)^T w_h - beta phi(s, a)^T m_h
//	Qhat_h     = min{Qbar_h, H - h + 1}^+
//	Vhat_h(s)  = max_a Qhat_h(s, a)
//
// and the policy is pihat_h(s) = argmax_a Qhat_h(s, a), ties to the lowest
// action. Vhat_{h+1}(s_{h+1}) is 0 when the trajectory has no row at step
// h+1 (it ended). A [Policy] stores, per step, w_h and m_h (the vectors
// of [StepCoef]) and evaluates Qbar_h as one dot product with w_h - beta
// m_h per action.
//
// The penalty scale is beta = c d H sqrt(zeta), zeta = log(2 d G H N_max /
// xi) ([Beta]), with G the number of groups and N_max the largest number
// of trajectories in a group (a trajectory counts if it has any row), or
// beta given directly ([Settings].BetaSet). Defaults ([DefaultSettings]):
// lambda = 1, c = 5e-4, xi = 0.05, the paper's simulation settings.
//
// A decision where every action's Qhat_h is 0 has no evidence behind it.
// The paper then takes the lowest action ([FallbackLowest]); by default
// ([FallbackBehaviour]) the policy takes what the training data did most
// often, all sites pooled, ties to the lowest action, at the first of
// three levels that has counts:
//
//  1. the cell's most frequent action at that step, for maps whose
//     features are indicators of cells ([BehaviourCells]: tabular,
//     indicator, binned);
//  2. the step's most frequent action (every state of the other maps);
//  3. the most frequent action over all steps, for a step where no action
//     has any count: no rows, or every count withheld by disclosure
//     control ([CompleteBehaviour]; action 0 if no step has a count).
//
// The rule changes only the recommendation: Vhat_h there is 0 either way,
// so the backward pass and w, m do not depend on it (Vhat_{h+1} is the
// maximum of Qhat_{h+1} at the successor rows). [Policy.Act] reports
// whether a decision has evidence.
//
// The baselines of section 4.1 use PEVI's penalty instead of the
// feature-wise one: Qhat_h = min{phi^T nu_h - beta sqrt(phi^T
// (Lambda_h)^{-1} phi), H - h + 1}^+ for a single group, with its own
// backward pass. [PEVIPooled] runs it on all sites pooled (G = 1, N_max =
// all trajectories). [PEVIAvg] and [PEVIMin] run it on each site alone
// (G = 1, N_max = that site's trajectories) and combine the sites' Qhat
// by their average (Average-Q) or pointwise minimum (Min-Q) before the
// argmax; the policy stores nu_h and (Lambda_h)^{-1} block by block for
// each run. [Behaviour] is the fallback table alone: no regression.
//
// With [Settings].Stationary (off by default) transitions and rewards are
// assumed not to depend on the step: each group has one Lambda^g summed
// over every step's rows, and round h regresses every transition's r +
// Vhat_{h+1}(s') on it.
//
// [Solver.Delta] computes, for a clustering, Delta_{h,m} = max_{k in C_m}
// ||nu_h^k - nu_h^m||_2 with both regressions at the cluster solve's
// Vhat_{h+1}: how far each site's own regression is from its cluster's
// (section 3.3). [Solver.EvaluatePolicy] runs the recursion above with the
// policy's action in place of the max (robust fitted-Q evaluation): with
// beta = 0 for the robust value, with a given beta (typically
// [Solver.SitewiseBeta]) for its lower bound, and on each site alone for
// the site's own value.
//
// Lambda_h^g does not depend on Vhat: the per-(site, step) Grams ([Stats])
// are summed once, and each (group, step)'s Lambda is factorised once
// ([Factor]) and reused by every right-hand side; a [Solver] keeps the
// factors for its later methods and penalty-path points unless they are
// too large to keep. Features are sparse and Lambda is block diagonal wherever
// no feature vector spans two blocks (action-block maps: one block per
// action; tabular and indicator maps: diagonal; precomputed maps: blocks
// found from the data, [BlocksFor]); every block is factorised (Cholesky)
// and solved on its own, and no dense d x d matrix is formed.
//
// # Many runs in one sweep: folds and candidates
//
// A cross-fit learns a policy on the rows of every fold but one, for
// each fold, and a choice of the penalty from data learns one per
// (fold, candidate). [SolveLockstep] learns them all in one backward
// sweep: each [RunSpec] names the fold it leaves out ([Folds], -1 for
// none), its [Problem] and its Settings (Lambda, C, Xi or Beta,
// Fallback), and round h of every run is done before round h-1 of any,
// each step's rows read once per round for all of them. Runs that leave
// out the same fold share the step's Grams, those that also share
// lambda share the factors (a penalty path on a fold factorises each
// (group, step) once), and runs equal in fold, lambda, method and beta
// share their backward pass. Each run's policy is bit for bit the one
// [Solver.Solve] learns from the table with its fold's rows weighted 0:
// a row of weight 0 adds exactly 0 to every sum, so leaving it out keeps
// every bit. Stationary settings and disclosure control are refused. For
// K folds and C candidates:
//
//	runs := make([]solve.RunSpec, 0, K*C)
//	for f := 0; f < K; f++ {
//		for _, s := range candidates { // each a Settings: Lambda, C (or Beta)
//			runs = append(runs, solve.RunSpec{Holdout: f, Problem: prob, Settings: s})
//		}
//	}
//	pols, err := solve.SolveLockstep(ctx, st, solve.Folds{Of: fold, K: K}, runs, workers)
//
// with st the statistics of the whole table ([NewStats]) and fold each
// trajectory's fold; pols[i] is runs[i]'s policy.
//
// Evaluations of several policies on the same rows with the same
// bootstrap replicates (a fold's policy and its behaviour cloning) share
// the replicates' factors when the statistics are told to
// ([Stats.ShareReplicateFactors]).
//
// # Exact, estimated, bounded
//
// Exact up to float64 rounding, in a fixed order of operations: the Grams,
// Lambda, nu, w, m, beta, Qhat, Vhat, the decisions and the behaviour
// table, that is everything Algorithm 1 and the baselines define, and
// Delta_{h,m} as defined above. The policies in memory and those read back
// from their artifact give the same Qhat bit for bit. Out of core
// ([SolveStreamed]) the policies and diagnostics are those of the
// in-memory solve, bit for bit.
//
// Estimates of the paper's quantities, not the quantities themselves:
// Vhat_1 averaged over the data's initial states ([Policy].ValueEstimate)
// is the algorithm's pessimistic estimate of the policy's robust value,
// not that value (which only a known model gives exactly, package eval);
// [Evaluation].Value is a fitted-Q estimate. [Evaluation].LowerBound and
// Qhat are pessimistic, but they bound the true robust values only on the
// paper's event E, where beta phi^T m_h is a xi-uncertainty quantifier
// (probability 1 - xi under the linear MDP assumptions, with beta as large
// as the theory's unspecified constant c requires): with the default c =
// 5e-4 they are pessimistic estimates, not guaranteed bounds. The solver's Delta_h is
// a plug-in at one V (Vhat_{h+1}); the paper's Delta_h is a supremum over
// a class of V of population parameters.
//
// Diagnostics ([Diagnose], [Diagnostics]): the share of decisions without
// evidence is exact for a policy just solved (the backward pass counts
// every row) and, for pevi-avg, pevi-min and policies read from a file,
// is counted on every row up to [SampleRows] rows and on a systematic
// sample above. The penalty's scale is estimated on every 8th row of each
// step. Coverage and empty cells are exact (weighted) counts. The condition number
// of each Lambda_h^g ([Factor.Cond], [Diagnostics].Cond) is LAPACK's
// estimate of the 1-norm condition number of Lambda's worst block: at
// most the exact value (up to rounding) and in practice within a factor
// of 3 of it; above
// [CondWarn] a solve warns that nu has lost most of its digits.
//
// # Errors and panics
//
// Errors, for inputs and settings a user can get wrong: a Lambda that is
// not positive definite ([ErrSingular]: lambda = 0, or a lambda so small
// against the data that Cholesky fails); an unknown method, a cluster
// problem without groups, or groups that do not partition the sites
// ([Solver.Solve]); a policy artifact that is malformed or does not fit
// the data ([ErrBadPolicy], from [FromRows] and [Solver.EvaluatePolicy]);
// the stationary variant out of core ([ErrStationaryStreamed]) and a step
// window that does not match the survey ([SolveStreamed]); and a cancelled
// context, returned as its error by every function that takes one. A beta
// that overflows (a tiny xi) is returned as it is: [Beta] may be +Inf or
// NaN, and the caller refuses it before writing a policy.
//
// Panics, for misuse by the calling code, never for data: [NewStats] with
// a feature map whose state width differs from the table's; Grams
// computed with blocks in which a feature vector spans two blocks (blocks
// not from [BlocksFor] for this map and table); and, as for any slice
// index, a step outside 1..H or a buffer shorter than A given to
// [Policy.Act] or [Policy.QValues]. The
// trajectory table is validated by its builder, and a policy from
// [FromRows] is checked before it is returned.
//
// # Workers
//
// Nothing depends on [Settings].Workers or on GOMAXPROCS: policies,
// values, diagnostics and evaluations are bitwise identical for any number
// of workers. Work is split into units whose results do not depend on the
// split: each (site, step) Gram and each site's right-hand side is summed
// serially in table order; each (group, step) factor is built from its
// Grams summed in group order; the value sweep over a step's rows is cut
// into a fixed number of contiguous chunks (not one per worker) whose
// partial sums are combined in chunk order; the behaviour table is counted
// per step; samples take every stride-th row, with the stride fixed by the
// number of rows ([SampleStride]). Workers only decide how many of these
// units run at once. Errors too: when several units fail (a singular
// Lambda at several groups, say), the error returned is that of the first
// unit in the order a single worker runs them (within a step, the lowest
// group), whatever the number of workers.
package solve
