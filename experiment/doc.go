// Package experiment reproduces the three simulations of the paper's
// section 4 under the models of package sim: it runs R independent trials
// in parallel, summarises them with t-intervals and log-log fits, and
// writes tables, plots and a JSON summary. `grmdp experiment` is a thin
// shell over [Run] and [Summary.Write].
//
// # The experiments
//
//   - [Benchmark] (section 4.1, Figure 1): the linear-Beta model, K = 3,
//     A = 10, H = 7, N = 3000, 2000, 5000; lambda = 1, xi = 0.05,
//     c = 5e-4. Each trial draws a model and a data set, solves sitewise
//     (Algorithm 1), pevi-pooled (the paper's Naive Pooling), pevi-avg and
//     pevi-min on the same data, and scores each by its mean robust
//     suboptimality V*_1(s) - V^pi_1(s) over 200 uniform initial states.
//     The summary gives each method's mean over the trials with its 95%
//     t-interval.
//   - [Convergence] (section 4.2, Figure 2): the hard instance, K = 4,
//     A = 7, H = 40, N_min in {50, 100, 500, 1000, 2000, 5000, 8000}.
//     Each (trial, N_min) solves Algorithm 1 and records the suboptimality
//     at s0, (H-1)[min_k p_1^k - min_k P_1^k(s1 | s0, pihat_1(s0))], and
//     the value gap V*_1(s0) - max_a Qhat_1(s0, a).
//   - [Pessimism] (section 4.3, Figure 3): the trap instance, A = 2,
//     K = 3, H = 7, lambda = 1e-5, c in {0, 5e-4, 1e-3}, N_min in {20,
//     200, ..., 2e6}; mean suboptimality over 200 uniform initial states.
//     The c values of a (trial, N_min) solve the same data set.
//     Config.TrapCount, RewardScale and BetaNMin are ablations of this
//     experiment (off by default) used to examine why its decay is slower
//     than the paper's; docs/RESULTS.md reports them.
//
// Beyond the paper, [Coverage] is the calibration study of grmdp eval's
// intervals and flags on the benchmark or formulary scenario
// (Config.Scenario): each replicate draws a model and a data set, solves
// the behaviour policy and Algorithm 1 (grmdp solve's defaults, the
// behaviour fallback), evaluates each with eval.FromData
// (Config.Bootstrap replicates) and scores every site value and the
// robust value against its exact value under the model: covered (the
// interval, or for a value not identified the bounds' interval, contains
// it), a flagged miss (an interval warning or identified: false) or a
// silent miss. The summary's "coverage" rows count them per policy and
// quantity with the mean bias; "cells" lists every value.
//
// On the clinical scenario (a nonlinear disease process with continuous
// vitals, 0/1 outcomes, early deaths and NULL lactate) the study runs the
// commands' path instead: each replicate writes its data set as a
// Parquet export with its NULLs, opens it with the soft-binned map and
// --nulls truncate (dataset.Open), solves the site-wise policy
// (dataset.Data.Solve), evaluates it on the same rows
// (dataset.Data.Evaluate: sample "in") and cross-fits it
// (dataset.Data.Validate, five folds: sample "cross"), and scores every
// estimator's site values and worst site (fitted-Q, PDWIS, WDR) and the
// observed care against the simulator's Monte Carlo values, widening each
// interval by two Monte Carlo standard errors. Its rows add the
// estimator, the sample, whether the estimate is the headline eval and
// validate print first, and which warnings flagged the misses.
//
// Every solve of the paper's experiments uses the paper's tie rule ([solve.FallbackLowest]): the
// lowest action wins ties and decisions without evidence. The hard and
// trap instances are sampled as counts ([sim.Compressor]), which has the
// law of per-trajectory sampling and gives Algorithm 1 the same sums, so
// N_min = 2e6 takes no memory proportional to N.
//
// # Statistics
//
// A metric's value at a grid point is its mean over the R trials, with
// the two-sided 95% t-interval mean ± t_{0.975, R-1} sd/sqrt(R)
// ([MeanCI]). A fit ([LogLog]) regresses log(mean) on log(N_min) by
// ordinary least squares; the slope's interval is slope ± t_{0.975, n-2}
// se(slope), and R^2 is that of the log-log regression ([OLS]). A mean of
// exactly zero (every trial optimal) cannot enter a log-scale fit: it is
// left out, and the fit's Skipped and Note say so. The pessimism summary
// also fits every curve on its first len(N_min)-1 points (RangeFits), the
// range the paper used for c = 1e-3.
//
// # Seeds and parallelism
//
// Trial r of a run with seed S draws its model from Derive(S, r, 1), its
// data at grid point i from Derive(S, r, 2, i) and its evaluation states
// from Derive(S, r, 3) (benchmark: the data seed of point 0; with
// FixedModel one model from Derive(S, 1) serves every trial). Tasks (a
// trial, or a trial and a grid point) run on Config.Workers goroutines;
// task i writes only slot i, and the summary is built from the slots in
// order afterwards, so summary.json is bitwise identical for any number of
// workers. A failed run reports the error of the lowest task that failed,
// as a serial run would. Every seed is recorded in the summary.
//
// # Output
//
// [Summary.Write] writes to a directory:
//
//   - summary.json: the [Summary]: the settings, the command, R, the seed
//     and every trial's seeds; for the benchmark "methods" [{"method",
//     "mean", "ci_low", "ci_high", ...}]; for the others "points" (per
//     grid point and c: the mean, interval, standard deviation, number of
//     zero trials and every trial's value) and "fits" [{"metric", "c",
//     "slope", "ci_low", "ci_high", "r2", ...}] with the paper's reported
//     slope beside ours. Numbers that cannot be computed are null.
//   - table.md and table.csv: the same numbers for people and for
//     spreadsheets.
//   - plots, each as .png (150 dpi) and .svg: the benchmark's
//     suboptimality-box (Figure 1A, Tukey boxes over the trials) and
//     suboptimality-mean (Figure 1B, mean and 95% CI per method); the
//     convergence experiment's suboptimality and value-gap (Figure 2A and
//     2B, log-log, means with 95% CIs and the dashed fitted power law);
//     the pessimism experiment's suboptimality (Figure 3, one curve and
//     fit per c). On the log axes, an interval whose lower end is at or
//     below 0 is drawn truncated at the bottom of the plot, and table.md
//     says so.
//
// Files are written atomically. Their bytes depend only on the summary.
package experiment
