// Package eval answers the questions a reviewer asks of a policy: how good
// is it at the worst site, how sure are we, and was pooling these sites
// justified?
//
// # From data alone
//
// [FromData] runs robust fitted-Q evaluation: the backward recursion of
// Algorithm 1 (per-site ridge regressions of r + V^pi_{h+1}(s'), row-min
// across sites, clipped to [0, H-h+1]) with the policy's action in place of
// the max. Subtracting the penalty beta phi^T m gives a pessimistic lower
// bound; running the recursion on one site's data gives that site's own
// (non-robust) value. The values use the ridge parameter [EvalLambda]
// (1e-6, or the policy's lambda if smaller), not the policy's: lambda = 1
// shrinks every regression toward 0, a bias the bootstrap cannot see, and
// on the benchmark scenario it put each site's value 4% low, outside its
// 95% interval at every site. The pessimistic value (the paper's, with
// the penalty) keeps the policy's lambda.
// Intervals come from a bootstrap that resamples trajectories within each
// site (row weights, so no data is copied; see below).
//
// # The bootstrap: Poisson weights, replicates in lockstep
//
// Replicate b counts trajectory i c_{b,i} ~ Poisson(1) times, every row of
// the trajectory weighted by that count, with c_{b,i} a function of
// (seed, b, i) alone: the uniform mix(mix(seed), b) xor mix(i), mixed
// once more by splitmix64's finaliser, turned into a count by inversion of
// the Poisson(1) distribution function. This is the Poisson bootstrap, the
// streaming form of the within-site trajectory bootstrap: the multinomial
// draw of N_k trajectories from a site's N_k has counts that are
// Binomial(N_k, 1/N_k), close to Poisson(1) for all but tiny sites, and
// unlike the multinomial's, the Poisson counts are independent across
// trajectories, so any replicate's count of any trajectory can be
// computed in any order. That lets every replicate advance in lockstep
// with the point estimate: one backward sweep in which each round reads
// the step's rows once and adds each row, weighted by every replicate's
// count of its trajectory, to that replicate's per-site Gram and
// right-hand side (with that replicate's Vhat_{h+1}), the policy deciding
// once per row (solve.Replicates). What changes against the multinomial:
// the number of trajectories a replicate draws at a site is random (mean
// N_k, variance N_k) instead of exactly N_k. The values are means over
// the drawn trajectories (divided by the drawn count), so this changes
// their replicates' spread only at order 1/N_k; it matters when a site is
// so small that a replicate may draw none of it (probability e^-N_k):
// that replicate's value of the site is then NaN and left out of the
// quantiles. The result does not depend on the number of workers or on
// the order rows are read. The observed care and the identification
// bounds' replicates use the same counts.
//
// # Intervals
//
// The intervals are basic (reflected) bootstrap intervals,
// [2 theta - q_hi, 2 theta - q_lo] with q the replicates' quantiles, and
// each estimate carries the bootstrap's bias estimate mean(theta*) - theta.
// On sparse data fitted-Q evaluation is biased: a resample has fewer
// distinct trajectories, so more cells without data, each shrunk toward 0,
// and its value is lower. The percentile interval [q_lo, q_hi] then sits
// below the estimate (it did, on the formulary scenario, at four of five
// sites). The basic interval corrects this first-order bias by
// reflection. BCa was rejected: its bias constant z0 = Phi^-1(share of
// replicates below theta) is infinite exactly when the bias is largest
// (every replicate below the estimate), and its acceleration needs a
// jackknife over trajectories, one refit per trajectory. No interval
// method repairs a value the data cannot identify; a warning is raised
// whenever an interval misses its estimate or |bias| is more than half the
// interval's width, and the identification bounds below say when that is
// so. For an identified value whose bounds are wider than its interval a
// warning says so too: the estimate counts cells without data as 0 and
// the bootstrap resamples only the data's cells, so the interval is silent
// about what those cells are worth (the calibration study of package
// experiment found every site miss on the formulary scenario to be of
// this kind).
//
// The worst site's interval, for every estimator ([WorstOf]), is formed
// from the sites' own intervals: [min_k lo_k, min_k hi_k], around the
// smallest of the sites' estimates. It covers the smallest true value
// whenever every site's interval covers its own (an intersection-bounds
// argument: the truly worst site's low end lies below its value, and
// every site's high end lies above its own value, so the smallest high
// end lies above the smallest value); its low end misses at most as often
// as one site's interval misses on one side. The basic bootstrap interval
// of the minimum over sites is not used for any worst site eval or
// validate reports: the minimum is not a smooth function of the sites'
// values where two are close, each replicate's minimum falls on the site
// whose resampling fell lowest, so the replicates' minima sit below the
// estimate and the reflection moves the interval up: it undercovers the
// worst site (the clinical scenario's calibration study in package
// experiment shows it). validate's worst sites use the same rule on the
// cross-fitted sites' intervals. The text and the report print the
// worst site's interval as that of the minimum over sites, since its ends
// may be other sites'.
//
// The cross-fitted choice of settings (solve --c auto, and compare
// --heldout, which scores methods the same way) deliberately ranks
// candidates by the basic bootstrap interval of the minimum over sites
// (each replicate's minimum): its replicates are paired across
// candidates (the same held-out rows and bootstrap draws), so the gain
// over the behaviour fallback and the ties between candidates are paired
// differences of minima, which intervals formed from each candidate's
// sites' intervals cannot give. Its lower limit is a ranking score, not
// the reported worst-site interval, and is known to be optimistic for the
// minimum (the same calibration study).
//
// # Identification bounds and support
//
// For maps whose features are indicators (tabular, indicator, binned),
// Q_h(s,a) is one coefficient per cell (state or bin, action) and step, so
// what the data say about it is exact: a site either observed the cell at
// step h or did not.
// The bounds run the recursion on the cells' means, counting a cell
// without data at that site and step as the ends of the value range from
// step h on, [0, min((H-h+1) RewardMax, Hi)] with Hi the return range's
// upper end (one parameter of the code, valueRange); the lower bound's
// means divide by n + lambda, the evaluation's ridge ([EvalLambda]), as
// fitted-Q's coefficients do, so that a value is never below its own
// lower bound; every cell mean of the bounds is moved outward by a
// relative 1e-12, so that rounding in fitted-Q's factorisation cannot put
// a value a rounding error outside bounds equal to it in exact
// arithmetic. The robust value's lower bound takes the row-min over all
// sites (a site without data counting 0).
//
// The robust value's upper bound is a minimum over sites, and a minimum
// of noisy means is biased low: on a cell that some site observed once or
// twice, that site's mean decides it. So inside the minimum each site
// contributes an upper confidence limit for its cell's mean of r +
// Vhi_{h+1}(s'), not the mean itself: with n the cell's (weighted) rows
// at the site and x the mean rescaled to [0, 1] by the value range from
// step h, the largest q with n kl(x, q) <= ln(1/alpha), kl the Bernoulli
// relative entropy (the Chernoff bound in Kullback-Leibler form,
// Hoeffding 1963, theorem 1, valid for any variables in a known range;
// the kl-UCB index of Garivier and Cappe 2011). It is the trivial top of
// the range on a cell with a handful of rows and approaches the mean as
// rows accumulate. Level and multiplicity: alpha = (1 - [BoundsLevel]) /
// K, Bonferroni over the K sites of the minimum, so that at every step
// and cell the minimum over the sites' limits is at least the cell's
// robust value (a minimum over all sites of their means, not larger than
// the minimum over the sites that observed the cell) with probability at
// least 0.95. There is no correction across cells and steps: the
// guarantee is per cell, and a value averages many cells. The limit
// treats Vhi_{h+1} as fixed, as the recursion does; it is formed from
// later rows of the same trajectories. Sites' own upper bounds keep their
// cells' means: a mean is not biased, and its sampling error is what the
// bootstrap below measures.
//
// Binned maps: a cell pools every state whose columns fall in its bins,
// so what the data identify is the value of the cell under the mix of
// states the site's rows visit. The bounds are bounds on cells' values
// and assume a cell's value does not depend on that mix; a binned
// report's warnings say so. Nothing in the data would widen them to
// bounds on the states' values short of the trivial [0, Hi].
//
// Disclosure control: a cell that [solve.Disclosure] withholds at a
// (site, step) (its released count is 0: solve.Stats.Counts) is treated
// as never observed there, in the bounds as in every value, so that a
// federated evaluation's bounds equal the central one's under the same
// thresholds.
//
// A value whose bounds are wider than IdentifiedShare (10%) of the return
// range is flagged as not identified. The bounds' interval is the lower
// bound's lower percentile to the upper bound's upper percentile (never
// inside the bounds): resampling only adds cells without data, which
// widens the bounds, so here the percentile method errs wide and
// reflecting would narrow.
//
// # The return range
//
// Options.ReturnRange states the range [Lo, Hi] of an episode's total
// reward (a 0/1 outcome: [0, 1]); without it the range is [0, H RewardMax].
// It caps the value of cells without data in the bounds and the range the
// upper confidence limits rescale by, every interval and bound is clipped
// into it (point estimates are not: an estimate outside the range is
// outside its interval, and flagged), and it is the scale of
// "identified". When it is not stated and every observed return lies in
// a span narrower than IdentifiedShare of [0, H RewardMax], Report.Notes
// asks for it: a probability judged on the scale of H would count bounds
// many times its own range as identified.
//
// A site's support is the share of its visits (rows at every step) at
// which the policy's action was observed at that site and step; the robust
// support the share of all visits at which every site observed it. For
// other maps there are no bounds, and a visit has evidence at a site when
// the leverage of the policy's feature vector under the site's ridge Gram
// at that step, phi^T (lambda I + Gram)^-1 phi, is at most that of one
// observation of exactly phi, |phi|^2 / (lambda + |phi|^2) (the count
// criterion again on a tabular map); large tables are read at a systematic
// sample of rows.
//
// # Observed care
//
// Each site's mean realised return, the sum of rewards per trajectory
// averaged over the site's uncensored trajectories, estimates the value of
// the care actually given without a model; its interval comes from the
// same bootstrap replicates.
//
// # Censored episodes
//
// An episode that --nulls truncate cut before a NULL
// (traj.Table.Censored) has an unknown return: the sum of the rows left
// is not it (a survivor cut before its last step would count as a
// death). Observed care, PDWIS and WDR leave censored episodes out and
// weight each uncensored one by the inverse probability of censoring:
// 1 / G(L) for an episode whose last row is at step L, with G the
// Kaplan-Meier estimate, per site, of the probability of running to step
// L without being censored (hazard at step h: the episodes censored at h
// over those at risk there, the episodes with a row at h and those
// censored at h). Exclusion alone is biased even when every row's NULL is
// independent of everything: a long episode has more rows that can be
// NULL, so it is censored more often, and an episode's length goes with
// its outcome (early deaths and discharges are short). The weights are
// held fixed across bootstrap replicates. The report counts the censored
// episodes per site (SiteValue.Censored, ObservedValue.Censored).
// Fitted-Q keeps the episode's rows whose successor was observed; the last
// kept row has weight 0 in the table and enters no regression (it is not
// a terminal with value 0). The weighting is consistent when censoring
// depends on nothing but the step (for the episode-level estimators; at
// random given the state and action for fitted-Q's regressions); a NULL
// caused by the outcome (a lab not drawn because the patient died)
// breaks it, and the count cannot show that.
//
// # Delta_h
//
// [Delta] computes Delta_{h,m} = max_{k in C_m} ||nu_h^k - nu_h^m||_2 at the
// cluster-level solve's Vhat_{h+1} (paper section 3.3), Delta_h = max_m,
// their sum, and the yardstick 1/sqrt(N_min) - 1/sqrt(N_min^pool). Beyond
// the paper, a max-statistic permutation test (Westfall and Young's
// single-step maxT): each of B permutations reassigns every cluster's
// trajectories to its sites at random (keeping site sizes) and recomputes
// every Delta_{h,m}; each cell's statistic is standardised by its
// permutation mean and standard deviation, and the adjusted p-value of a
// cell is (1 + #{b : max over cells of z^b >= z}) / (1 + B). It holds the
// family-wise error over all steps and clusters; the smallest attainable
// p-value is 1/(1+B), so B must be at least 20 for any p-value to fall
// below 0.05 (grmdp eval uses 199 by default). The permutations advance
// in lockstep too: each (cluster, step) task reads the step's rows once
// per batch of up to 32 permutations and adds each row to its new site's
// Gram and right-hand side under every one of them, in row order, so
// each permutation's statistics are those of its own pass bit for bit.
//
// # Estimators that do not trust the model
//
// Beside fitted-Q evaluation (FQE: the site's own linear regression of
// r + Vhat_{h+1} on phi, backward, with the policy's action), each site's
// value is estimated by per-decision weighted importance sampling
// (PDWIS) and weighted doubly robust (WDR; Thomas and Brunskill 2016,
// "Data-efficient off-policy policy evaluation for reinforcement
// learning"), for the deterministic policy evaluated. With rho_t =
// 1{a_t = pi(s_t)} / mu(a_t | s_t), w_h the product of a trajectory's
// ratios through step h (w_0 = 1 before step 1) and N_h the sum of w_h over
// the site's trajectories,
//
//	PDWIS = sum_h sum_i w_{i,h} r_{i,h} / N_h
//	WDR   = sum_h sum_i [ w_{i,h} (r_{i,h} - Qhat_h(s, a)) / N_h + w_{i,h-1} Vhat_h(s) / N_{h-1} ]
//
// where Qhat and Vhat are the site's own FQE model (the one whose value
// FQE reports); at rows with nonzero weight a = pi(s), so Qhat(s, a) =
// Vhat(s). An episode shorter than H ends in a state worth 0 with reward
// 0 after its last row: its weight stays what it was (it counts in every
// later N_h) and it adds nothing after. The estimators are SCOPE-RL's
// self-normalised PDIS and DR ("SNPDIS", "SNDR", which self-normalise
// the per-decision weights by their mean at each step, as here); d3rlpy
// offers FQE alone, as this package did before.
//
// The behaviour mu is estimated per (site, step), from that step's rows
// of the site alone (practice varies by hospital and by time in the
// episode, and a per-step fit is what the backward sweep can form from
// the rows it holds; pooling steps would need every step first). Its
// formulary is the set of actions the site took at the step.
//
//   - Indicator maps (tabular, indicator, binned: the features are
//     indicators of cells): mu(a | cell) = (n_{cell,a} + 1/2) /
//     (n_cell + m/2) over the m formulary actions ([CellSmoothing]; the
//     Jeffreys prior: a cell seen once does not make the behaviour look
//     deterministic). A cell the site never visited at the step gets
//     1/m.
//   - Other maps: a multinomial logistic regression of the action (the
//     formulary's actions as classes) on the standardised state columns
//     with an intercept, fitted by Newton's method with step halving and
//     a ridge of [LogitRidge] on the slopes, at most 50 iterations,
//     stopping when no coefficient moves by 1e-10; on at most
//     [LogitFitRows] rows at a regular stride. Deterministic, and fast
//     enough to run at every (site, step).
//
// Each ratio is clipped at [RatioClip] (a propensity floor of 0.01) and
// the cumulative weight at [WeightClip]. SCOPE-RL takes propensities as
// given and clips nothing by default; here they are estimated, and a
// logistic regression's tail can put a propensity near 0 where the data
// have few rows, so a floor bounds what one such decision can do.
//
// Assumptions, and when each fails:
//
//   - FQE assumes the linear model in phi holds for every step's value
//     under the policy (realizability and completeness). When it does
//     not (binned or soft-binned vitals of a nonlinear disease process),
//     FQE is biased, the bootstrap does not see the bias, and its
//     interval can miss the truth by far. On the policy's own training
//     rows it is optimistic as well.
//   - PDWIS assumes the behaviour model is right and every action the
//     policy takes has a positive propensity where the policy takes it
//     (positivity). It is consistent but biased in small samples (the
//     self-normalisation), and its variance grows with the product of
//     ratios over the horizon: read [SiteValue].ESS, the effective sample
//     size (sum w)^2 / sum w^2 of the final per-trajectory weights. With
//     an ESS of a few tens, PDWIS and WDR rest on a few trajectories and
//     their bootstrap intervals are too narrow.
//   - WDR is consistent when either the behaviour model or the FQE model
//     is right, and its variance is PDWIS's reduced by what the model
//     explains. Where every weight is 0 it falls back on the model's
//     value (the terms over all-zero weights are 0), and PDWIS is NaN.
//   - Deterministic behaviour (one action per cell or state region)
//     gives ratios of 1 where the policy agrees and 0 elsewhere: the
//     estimators average the trajectories that happen to follow the
//     policy, and say nothing about states where it differs.
//   - An action off a site's formulary at a step has propensity 0 there:
//     a policy that chooses it gives the trajectory weight 0 from that
//     step on, which is counted ([SiteValue].OffFormulary). The policy's
//     value at such a site is not identified by importance sampling; if
//     it chooses such an action at step 1 everywhere, PDWIS is NaN and
//     WDR is FQE's value.
//
// When FQE and WDR disagree at a site, a warning says the model may be
// misspecified and to read WDR, unless WDR's ESS is below [LowESS], when
// it says neither is reliable there. Disagreement is a paired test
// ([Disagree]): both estimators are computed on every bootstrap
// replicate's trajectories, so their difference FQE - WDR has replicates
// of its own, replicate by replicate, and they disagree when the basic
// interval of the difference at the report's level excludes 0. The
// paired test is stronger than asking whether the two intervals overlap
// (two intervals can overlap while their difference is far from 0, when
// the estimators' errors move together); at the 95% level it fires at
// about 5% of sites where the two estimators have the same expectation. The headline
// ([SiteValue].Value, the worst site's and the robust value's) stays
// FQE's, named by the estimator fields: no documented rule picks among
// the estimators from the data (SCOPE-RL reports them side by side and
// leaves the choice to the user), and the robust value is FQE's by
// construction: its row-min over sites is taken inside the backward
// recursion, feature by feature, where importance weights have nothing to
// take a minimum over.
//
// All three come from the evaluation's one sweep: as the sweep values
// step h's rows it hands eval the policy's action and the site's own
// Vhat_h at each row ([solve.EvaluateOptions].OnStep), and every
// bootstrap replicate's own site coefficients of step h
// ([solve.EvaluateOptions].OnReplicateStep), which eval keeps.
// After the sweep one forward accumulation per site fits the behaviour at
// each step from the step's rows (at the steps where a trajectory still
// follows the policy: elsewhere every weight is 0 whatever the ratios)
// and forms the weights and the sums for the data and every bootstrap
// replicate (each replicate counting each trajectory its Poisson count
// times). Each replicate refits the behaviour to its own counts, in the
// same pass: for indicator maps its own smoothed cell frequencies; for
// the logistic regression one Newton step from the data's coefficients
// with the data's Hessian (the first-order expansion of the replicate's
// fit, which costs one pass over the fitted rows and one solve per
// replicate rather than a Newton fit). So the intervals of PDWIS and
// WDR carry the variability of the propensities' fit, which matters
// where the behaviour is estimated from few rows per (site, step)
// (SCOPE-RL's bootstrap of trajectory-wise values holds the propensities
// fixed). Each replicate's WDR also reads its own FQE model: the site's
// regressions fitted to the replicate's counts, which the sweep solves
// for FQE's replicates, their Qhat and Vhat formed from the kept
// coefficients (clipped as the sweep clips them) at the rows whose
// weight is not yet 0. So WDR's intervals carry the variability of both
// of its models' fits, and the paired difference FQE - WDR of a
// replicate compares two estimates with one model.
//
// # Through another feature map
//
// Policies learned with different maps are compared by one estimator
// when each is evaluated through the same map: with [Options].DecideOn,
// the solver's map (the evaluation's) fits fitted-Q, the behaviour
// propensities of PDWIS and WDR and the identification bounds, while the
// policy decides through its own map on DecideOn's states: the same rows
// in the same order, with its own state columns. The sweep asks the
// policy at every row ([solve.EvaluateOptions].DecideOn), so Vhat_h(s) is
// Qhat_h(s, pi(h, s)) with Qhat the evaluation map's and pi the policy's,
// at the rows and at their successors alike; the bounds and the support
// read the same decisions. The bounds follow the evaluation's map: for a
// binned map they assume a cell's value does not depend on the mix of
// states inside it, the policy's decisions included, which may differ
// inside a cell when the policy reads columns or cuts the cell does not.
// Report.EvaluationFeatures (evaluation_features in JSON) describes the
// evaluation's map; deciding on a copy of the solver's own rows gives the
// plain evaluation bit for bit.
//
// # Under a known model
//
// [Exact] evaluates a policy exactly (up to the model's stated quadrature
// or Monte Carlo accuracy) under a simulation model: the robust optimal
// value V*_1, the policy's robust value V^pi_1, the suboptimality and the
// value gap V*_1 - Vhat_1. [Model.ExactSites] gives each site's own
// exact value (the policy evaluated under that site's transitions and
// rewards alone) averaged over that site's own initial-state law, the
// quantity the site's estimate from data estimates: on the formulary
// scenario the exact expectation over the hospital's case-mix
// ([sim.SiteInitialLaw]); in the other scenarios, whose sites share one
// initial law, the mean over the evaluation states. The robust value
// averages over the evaluation states (a uniformly chosen hospital's
// case-mix on the formulary scenario), so it is not a minimum of the
// sites' exact values there.
package eval
