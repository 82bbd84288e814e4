package solve

import "errors"

// ErrSingular marks a (group, step) whose Lambda is not positive definite,
// which happens only with lambda = 0 or non-finite data.
var ErrSingular = errors.New("solve: Lambda is not positive definite")
