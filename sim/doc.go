// Package sim holds the simulation models of the paper's experiments: it
// draws multi-site offline data as a [traj.Table], writes and reads
// a model as JSON, and evaluates policies exactly under the known model
// by the robust Bellman recursion.
//
// # Scenarios
//
//   - "benchmark" ([Benchmark], paper 4.1): the linear-Beta model; K = 3,
//     p = 3, A = 10, H = 7, N = 3000, 2000, 5000; action-block features.
//   - "convergence" ([Hard], paper 4.2): the hard instance of Jin et al.
//     with a data-dependent gap delta^k; K = 4, A = 7, H = 40; indicator
//     features.
//   - "trap" ([Trap], paper 4.3): a safe action (mean reward 0.70) and a
//     rarely sampled, high-variance trap (0.65); K = 3, H = 7; action-block
//     features on a 15-point simplex grid; supports N_k in the millions
//     through [Compressor].
//   - "formulary" ([Formulary]): a tabular five-hospital scenario (S = 240,
//     A = 8, H = 20) with unequal sizes and case-mix, a hospital that never
//     uses half the actions and episodes that end at death; a test of the
//     guardrails on data that looks real.
//   - "clinical" ([Clinical]): five hospitals of 300 patients, H = 12,
//     A = 4 treatments, continuous vitals (lactate in mmol/L, SOFA 0..24)
//     driven by a latent severity, a 0/1 survival outcome as the reward
//     of an episode's last row, early deaths and discharges, hospitals
//     that differ in case-mix and formulary, and NULL lactate values; a
//     model no linear map fits, evaluated by Monte Carlo.
//
// [New] builds any of them from [Params]. Every choice the paper leaves
// open sits, with its default, in the scenario's spec ([BenchmarkSpec],
// [ConvergenceSpec], [TrapSpec], [FormularySpec], [ClinicalSpec]; all in
// params.go) and is explained in docs/EXPERIMENTS.md (the clinical
// scenario in [Clinical]'s documentation).
//
// # Randomness
//
// Params.Seed draws the model (its atoms theta and mu; for the hard
// instance also the first-step counts n_1^k, n_2^k that its delta depends
// on). The seed given to Sample, SampleRows and SampleCompressed draws the
// data, and the seed of InitialStates the evaluation states. Every site
// (and every Monte Carlo task) has its own PCG stream derived from the
// seed and its indices, so results never depend on scheduling or on
// GOMAXPROCS.
//
// # Data
//
// [Model.SampleRows] returns one [traj.Chunk] per site with integer
// columns site (1..K), traj (0..N_k-1), step (1..H) and action (0..A-1),
// a float reward in [0,1], and the state columns that [Model.Options]
// names ("state" for tabular and indicator maps, s1..sp for action-block).
// [Model.Sample] feeds those chunks to traj.NewBuilder(Options()),
// so its Table is exactly what reading the chunks' Parquet file with the
// same Options gives back. The same seed gives the same table. The
// clinical scenario's chunks have state columns lactate and sofa and also
// set Missing, with lactate NaN, on the rows whose lactate is NULL; its
// Options read with [traj.NullsTruncate], and its Sample is the table
// they give: each episode with a NULL ends before it, its outcome lost.
//
// [Compressor] tables (trap and convergence) hold one row per (site,
// step, state, action, next state) with Step.Weight the number of
// transitions and Reward their mean; their law is exactly the per-
// trajectory sampler's, summarised. Next then points to some row of the
// same site at step h+1 in the next state (several rows may share one),
// and Traj is the row's index within its step, not a trajectory.
//
// # Exact evaluation
//
// A [Policy] is deterministic and Markov. With V_{H+1} = 0 the model
// computes, for h = H..1,
//
//	w_{h,i} = min_k [theta^k_{h,i} + <mu^k_{h,i}, V_{h+1}>]    i = 1..d
//	V_h(s)  = max_a phi(s,a)^T w_h          (V*, [Model.OptimalValue])
//	V_h(s)  = phi(s, pi(h,s))^T w_h         (V^pi, [Model.PolicyValue])
//
// the d-rectangular robust Bellman operator of the paper's eq.
// (Bellman-Operator). SubOpt(pi; s) = V*_1(s) - V^pi_1(s). On finite
// state spaces (convergence, trap, formulary) the recursion is exact. For
// the benchmark, <mu^k_{h,i}, V> is the mean of V over M = 2048 fixed
// draws from mu^k_{h,i} (common random numbers: the same draws for V* and
// for every policy, seeded by the model and written in its file), so V*
// and V^pi are exact for one empirical robust MDP and SubOpt is never
// negative. Against 8 times as many independent draws, V*_1 differs by at
// most 0.005 and a mean SubOpt over 200 states by at most 0.005 (see
// docs/EXPERIMENTS.md and TestBenchmarkMCAccuracy). The draws are cached (40 MB at the defaults)
// unless the cache would exceed 256 MB, when they are redrawn identically
// at each evaluation.
//
// # The clinical scenario: Monte Carlo evaluation
//
// The clinical model is not linear in any feature map and its policies act
// on noisy vitals, so nothing about it is exact except what follows from
// its definition. [Clinical.Value] returns each hospital's expected
// outcome under a [ClinicalPolicy] (a decision from the hospital, the
// step and the vitals) as a Monte Carlo mean with its standard error
// (EvalEpisodes = 50,000 episodes per hospital by default: a standard
// error of about 0.0022 for a survival near 0.6), and
// [Clinical.BehaviourValue] the observed care's. Episode i of hospital k
// draws from the stream of (seed, k, i), the same number of draws at
// every step whatever the policy does, so values at one seed share their
// random numbers: two policies' difference has a far smaller error than
// either value. [Clinical.LatentValue] computes by backward induction on
// a grid of the latent severity (exact up to the grid, about 1e-4) the
// value of policies that see the latent state, among them every constant
// treatment and the best such policy, an upper bound on the best
// vitals-based policy (whose value is a partially observed problem's and
// is not computed). Tests check Monte Carlo against a closed form at
// H = 1, against the grid at H = 12, and against simulated data's
// uncensored outcomes.
//
// Through the [Model] interface (so that `grmdp eval --model` runs) the
// clinical model's OptimalValue is NaN, OptimalWeights, PolicyWeights and
// OptimalPolicy panic, [Model.SitePolicyValue] is a Monte Carlo value
// given the first vitals (the latent severity drawn from its posterior
// on a grid), [SiteInitialLaw] is 1000 draws of a hospital's first vitals
// and PolicyValue is the minimum over hospitals of SitePolicyValue: a
// site's value from that path has a standard error of about 0.004 and no
// robust (d-rectangular) counterpart.
//
// Evaluation may call a Policy from several goroutines at once; it must be
// safe for concurrent use and must not keep the state slice. A policy
// returning an action outside 0..A-1, or a state of the wrong width,
// panics: both are programming errors.
//
// # Model files
//
// [WriteModel] writes JSON with "format" ([ModelFormat]), "scenario", the
// resolved "params" and the scenario's drawn atoms ("benchmark_model",
// "convergence_model", "trap_model", "formulary_model" or
// "clinical_model"). The bytes
// depend only on the model; [ReadModel] rebuilds it without redrawing,
// so it samples and evaluates exactly as the model written. Bad files give
// errors wrapping [ErrBadModel].
//
// Models are safe for concurrent use.
package sim
