package federate

// evalVectors are the vectors of an evaluation round's message.
var evalVectors = []string{"bound_n", "bound_lo", "bound_hi", "value", "site", "bounds", "support"}
