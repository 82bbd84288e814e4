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
// (non-robust) value. Intervals come from a bootstrap that resamples
// trajectories within each site (row weights, so no data is copied);
// replicate b draws from a stream derived from (seed, b) alone, so results
// do not depend on the number of workers.
//
// # Delta_h
//
// [Delta] computes Delta_{h,m} = max_{k in C_m} ||nu_h^k - nu_h^m||_2 at the
// cluster-level solve's Vhat_{h+1} (paper section 3.3), Delta_h = max_m,
// their sum, and the yardstick 1/sqrt(N_min) - 1/sqrt(N_min^pool). Beyond
// the paper, a permutation test per cluster reassigns the cluster's
// trajectories to its sites at random (keeping site sizes) and reports
// p = (1 + #{Delta* >= Delta}) / (1 + B).
//
// # Under a known model
//
// [Exact] evaluates a policy exactly (up to the model's stated quadrature
// or Monte Carlo accuracy) under a simulation model: the robust optimal
// value V*_1, the policy's robust value V^pi_1, the suboptimality and the
// value gap V*_1 - Vhat_1.
package eval
