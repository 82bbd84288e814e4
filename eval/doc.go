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
// 95% interval at every site. The lower bound keeps the policy's lambda.
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
// # Identification bounds and support
//
// For maps whose features are indicators (tabular, indicator, binned),
// Q_h(s,a) is one coefficient per cell (state or bin, action) and step, so
// what the data say about it is exact: a site either observed the cell at
// step h or did not.
// The bounds run the recursion on empirical means (no ridge shrinkage),
// counting a cell without data at that site and step as 0 (lower) and
// (H-h+1) RewardMax (upper); the robust value's lower bound takes the
// row-min over all sites, its upper bound only over the sites that
// observed the cell. A value whose bounds are wider than IdentifiedShare
// (10%) of the value range [0, H] is flagged as not identified. The
// bounds' interval is the lower bound's lower percentile to the upper
// bound's upper percentile (never inside the bounds): resampling only
// adds cells without data, which widens the bounds, so here the
// percentile method errs wide and reflecting would narrow. The robust
// upper bound is a minimum over sites of noisy means, biased low on thin
// cells; when it is, the bounds are wide and the value is flagged.
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
// averaged over the site's trajectories, estimates the value of the care
// actually given without a model; its interval comes from the same
// bootstrap replicates.
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
