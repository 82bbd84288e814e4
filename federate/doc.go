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
// the behaviour fallback and its trajectory count. The coordinator sums the
// Grams and right-hand sides of each group in the central solve's site
// order, factorises, solves and takes the row-min and row-max exactly as
// package solve does, so H rounds give the central policy bit for bit.
// Disclosure control ([solve.Disclosure]) is applied at the site, through
// the same mask a central solve --min-count uses.
//
// Files: the job (job.json: settings, feature map, sites, thresholds) and
// its state (state.json: the round, the coefficients solved so far, the
// provenance of every folded message) are JSON; a site message is Parquet
// (package io/msgio) with its header as metadata. Each carries
// format_version. A step writes state.json atomically, after every check,
// so a refused message leaves the job as it was.
package federate
