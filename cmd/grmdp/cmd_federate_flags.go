package main

import (
	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/solve"
)

// disclosureFlags are the flags of disclosure control, with their defaults
// (0 for a central solve, 5 and 10 at a hospital in a federated job).
func disclosureFlags(minCount, minRows int) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "min-count", Value: minCount, Usage: "suppress a feature counted at fewer than `K` rows of a (site, step), as if never observed (its Gram row and column and right-hand side entry zeroed)"},
		&cli.IntFlag{Name: "min-rows", Value: minRows, Usage: "a site with fewer than `N` rows at a step contributes nothing to that step"},
	}
}

// parseDisclosure reads --min-count and --min-rows.
func parseDisclosure(c *cli.Context) (solve.Disclosure, error) {
	dc := solve.Disclosure{MinCount: c.Int("min-count"), MinRows: c.Int("min-rows")}
	if dc.MinCount < 0 {
		return dc, usagef("--min-count must not be negative, got %d", dc.MinCount)
	}
	if dc.MinRows < 0 {
		return dc, usagef("--min-rows must not be negative, got %d", dc.MinRows)
	}
	return dc, nil
}
