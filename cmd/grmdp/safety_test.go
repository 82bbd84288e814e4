package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// writeIntActions writes one site's 50 episodes of 5 steps with integer
// actions 0..2 and one state column s1 (17 distinct values); the action of
// row strayRow is stray instead (strayRow < 0: none).
func writeIntActions(t *testing.T, path string, strayRow int, stray int64) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "site", Type: arrow.PrimitiveTypes.Int64},
		{Name: "traj", Type: arrow.PrimitiveTypes.Int64},
		{Name: "step", Type: arrow.PrimitiveTypes.Int64},
		{Name: "action", Type: arrow.PrimitiveTypes.Int64},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s1", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	rb := array.NewRecordBuilder(memory.NewGoAllocator(), sc)
	defer rb.Release()
	n := 0
	for tr := 0; tr < 50; tr++ {
		for h := 1; h <= 5; h++ {
			a := int64((tr + h) % 3)
			r := float64(a) * 0.1
			if n == strayRow {
				a = stray
			}
			rb.Field(0).(*array.Int64Builder).Append(1)
			rb.Field(1).(*array.Int64Builder).Append(int64(tr))
			rb.Field(2).(*array.Int64Builder).Append(int64(h))
			rb.Field(3).(*array.Int64Builder).Append(a)
			rb.Field(4).(*array.Float64Builder).Append(r)
			rb.Field(5).(*array.Float64Builder).Append(float64(tr%7) + 0.5*float64(h))
			n++
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fw, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStrayAction pins that one stray action code among 0..2 is refused at
// once, naming file, column and row, instead of sizing every per-action
// table by it; and that --actions above the limit is a usage error.
func TestStrayAction(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "stray.parquet")
	writeIntActions(t, data, 37, 8_388_614)
	for _, cmd := range [][]string{{"inspect"}, {"solve", "-o", filepath.Join(dir, "p.parquet")}, {"solve", "--out-of-core", "-o", filepath.Join(dir, "p.parquet")}} {
		start := time.Now()
		code, _, errOut := grmdp(t, append(cmd, "--state", "s1", data)...)
		if code != exitBadData {
			t.Fatalf("%v: exit %d, want %d\n%s", cmd, code, exitBadData, errOut)
		}
		for _, want := range []string{"stray.parquet", "row 37", `column "action"`, "8388614", "recode the column"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%v: the message lacks %q:\n%s", cmd, want, errOut)
			}
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%v took %v", cmd, d)
		}
	}
	ok := filepath.Join(dir, "ok.parquet")
	writeIntActions(t, ok, -1, 0)
	if code, _, errOut := grmdp(t, "inspect", "--actions", "100000", ok); code != exitUsage || !strings.Contains(errOut, "--actions 100000") {
		t.Errorf("--actions 100000: exit %d, want %d:\n%s", code, exitUsage, errOut)
	}
}

// TestQuantileLimit pins that more quantile bins than a column has
// distinct values are refused with the most it can have, at once.
func TestQuantileLimit(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d.parquet")
	writeIntActions(t, data, -1, 0)
	start := time.Now()
	code, _, errOut := grmdp(t, "inspect", "--features", "binned", "--bins", "s1:q1000000000", data)
	if code != exitBadData {
		t.Fatalf("exit %d, want %d\n%s", code, exitBadData, errOut)
	}
	for _, want := range []string{"d.parquet", "s1 has 17 distinct values", "s1:q17"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the message lacks %q:\n%s", want, errOut)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	mustRun(t, "inspect", "--features", "binned", "--bins", "s1:q17", data)
}
