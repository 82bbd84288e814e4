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
//
// # Blocks
//
// Lambda = sum phi phi^T + lambda I is block-diagonal whenever no feature
// vector has nonzeros in two blocks. [Map.Blocks] gives the structure a map
// guarantees (diagonal for tabular and indicator, A blocks of p for
// action-block); [DiscoverBlocks] finds the finest one for precomputed maps
// from the data. Solvers factorise each block on its own, so a tabular map
// with d = 100,000 never needs a dense d x d matrix.
//
// A state is a []float64 of [Map.Width] values; integer states are stored
// as exact floats. The package imports nothing of grmdp's.
package features
