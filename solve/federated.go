package solve

// Penalize stores W - beta M, the coefficient Qhat is evaluated from (see
// setPenalized), so that a policy built from coefficients solved elsewhere
// (a federated coordinator's) evaluates as one solved here does, without
// computing it again at every row.
func (c *StepCoef) Penalize(beta float64) { c.setPenalized(beta) }
