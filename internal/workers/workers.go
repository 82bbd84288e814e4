// Package workers resolves a worker-count setting and runs parallel tasks
// whose failure is reported as a serial run would report it ([Group]), so
// that an error message, like every result, does not depend on the number
// of workers.
package workers

import "runtime"

// Or returns n, or GOMAXPROCS (at least 1) when n is not positive: the
// meaning of every Workers setting whose zero value is "every core".
func Or(n int) int {
	if n > 0 {
		return n
	}
	return max(1, runtime.GOMAXPROCS(0))
}
