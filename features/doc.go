// Package features holds the feature maps phi(s, a) of grmdp and the block
// structure they give the ridge Gram matrix.
//
// Every map sends a state-action pair to a sparse vector on the probability
// simplex in R^d (phi >= 0, sum phi = 1), as section 2.1 of the paper
// assumes:
//
//   - [Tabular]: integer state s in 0..S-1; phi(s,a) = e_{s*A+a}; d = S*A.
//   - [ActionBlock]: p nonnegative state columns, not all zero; block a
//     (coordinates a*p .. a*p+p-1) holds s/||s||_1; d = p*A (paper 4.1).
//   - [Indicator]: state in {0,1,2}; phi(0,a) = e_a, phi(1,.) = e_A,
//     phi(2,.) = e_{A+1}; d = A+2 (paper 4.2).
//   - [Precomputed]: a list of A*d floats holding phi(s,a) for every action,
//     row-major by action.
//   - [Binned]: p numeric columns, each cut at its [Bins] (a value equal
//     to a cut point falls in the bin below); the state is the cell of
//     the product of bins, numbered row-major in the columns' order
//     ([Map.Cell]); phi(s,a) = e_{cell*A+a}; d = cells*A.
//   - [SoftBinned]: the same cut points as centres of triangular
//     memberships that sum to 1 per column (full membership of the end
//     centre below the first or above the last); phi(s,a) is the average
//     over the columns of their membership vectors, in action a's block;
//     d = A * (sum of the columns' centres).
//
// # Why the simplex, and which map to use
//
// The paper's model reads phi(s, a) as a mixture of d prototype
// situations: nonnegative weights that sum to 1. Its uncertainty set (the
// d-rectangular set around each site's transitions) and its guarantee are
// built on that reading, so every map here puts phi on the simplex by
// construction. Raw clinical measurements (lactate, SOFA, age) are not
// such weights. The action-block map divides a row by its sum across the
// columns, which is right when the columns are shares of one whole and
// wrong for separate measurements, where the column with the largest
// units dominates every row ([Scales.Separate] is the check grmdp warns
// with). For separate measurements use Binned when one or two columns
// have meaningful thresholds (one feature per cell and action, easy to
// read, but cells multiply with columns and each needs data), and
// SoftBinned for several continuous columns (features grow with the sum
// of the bins, not their product, and phi changes continuously with the
// measurement). Cut points can be given or computed from the data as
// quantiles ([QuantileCuts]); the map records the values used.
//
// # Blocks
//
// Lambda = sum phi phi^T + lambda I is block-diagonal whenever no feature
// vector has nonzeros in two blocks. [Map.Blocks] gives the structure a map
// guarantees (diagonal for tabular, indicator and binned, A blocks of p for
// action-block, A blocks of the sum of the centres for soft-binned); [DiscoverBlocks] finds the finest one for precomputed maps
// from the data. Solvers factorise each block on its own, so a tabular map
// with d = 100,000 never needs a dense d x d matrix.
//
// A state is a []float64 of [Map.Width] values; integer states are stored
// as exact floats. The package imports nothing of grmdp's.
package features
