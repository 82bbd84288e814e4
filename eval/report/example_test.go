package report_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/eval/report"
)

func ExampleWrite() {
	dir, err := os.MkdirTemp("", "report")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	in := report.Input{
		Title:  "grmdp evaluation of policy.parquet",
		Policy: report.PolicyInfo{Method: "sitewise", Features: "tabular", H: 3, D: 8, A: 2, Beta: 0.01, Lambda: 1},
		Eval: &eval.Report{
			PolicyValue: 1.8, PessimisticValue: 1.6, ValueCILow: 1.7, ValueCIHigh: 1.9,
			Sites:     []eval.SiteValue{{Site: "a", Value: 1.9, CILow: 1.8, CIHigh: 2}, {Site: "b", Value: 1.7, CILow: 1.5, CIHigh: 1.9}},
			WorstSite: "b", Bootstrap: 100, Level: 0.95,
		},
		Commands: []string{"grmdp eval --policy policy.parquet --report out data.parquet"},
	}
	if err := report.Write(dir, in); err != nil {
		log.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		fmt.Println(filepath.Base(f))
	}
	// Output:
	// report.md
	// site-values.png
	// site-values.svg
}

func ExampleLinePlot() {
	dir, err := os.MkdirTemp("", "plot")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	n := []float64{50, 100, 500, 1000}
	series := []report.Series{
		{Name: "suboptimality", X: n, Y: []float64{0.4, 0.3, 0.12, 0.09},
			Lo: []float64{0.35, 0.25, 0.1, 0.08}, Hi: []float64{0.45, 0.35, 0.14, 0.1}},
		{Name: "fit, slope -0.5", X: []float64{50, 1000}, Y: []float64{0.4, 0.089}, Dashed: true},
	}
	err = report.LinePlot(filepath.Join(dir, "convergence"), "Suboptimality", "N_min", "suboptimality", series, true, true)
	if err != nil {
		log.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		fmt.Println(filepath.Base(f))
	}
	// Output:
	// convergence.png
	// convergence.svg
}
