package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/eval"
)

func writeAgreement(b *strings.Builder, a *eval.Agreement) {
	b.WriteString("\n## Agreement with the recorded actions\n\n")
	b.WriteString("The share of the data's rows (every step) at which the policy recommends the action that was recorded, " +
		"and the share of decisions without evidence, which follow the fallback.\n\n")
	b.WriteString("| site | rows | agreement | no evidence |\n|---|---|---|---|\n")
	for _, s := range a.Sites {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", cell(s.Site), count(s.Rows), pct(s.Share), pct(s.NoEvidence))
	}
	fmt.Fprintf(b, "| all | %s | %s | %s |\n", count(a.Rows), pct(a.Share), pct(a.NoEvidence))
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

func count(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
