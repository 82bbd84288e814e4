package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// FuzzConfig reads arbitrary bytes as a --config file of federate init
// and simulate, parsing their options without running them: every file is
// accepted or refused with one line (exit 2, or 3 for a value the data
// layer reads, such as max-memory), never a panic or an internal error;
// and a sites list that is accepted is the job's sites item for item
// (an item holding a comma stays whole). Its seed corpus is
// testdata/fuzz/FuzzConfig, run by an ordinary go test.
func FuzzConfig(f *testing.F) {
	f.Add([]byte("sites: [\"Boston, MA\", Paris, Rome]\nfeatures: tabular\nhorizon: 4\nactions: 2\nnum-states: 3\n"))
	f.Add([]byte("sites: a,b,c\nfederate init:\n  min-sites: 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(cfg, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range [][]string{{"federate", "init", "-o", filepath.Join(dir, "job")}, {"simulate", "-o", filepath.Join(dir, "d.parquet")}} {
			var got any
			ctx := context.WithValue(context.Background(), parseOnlyKey{}, &got)
			var stdout, stderr bytes.Buffer
			code := run(ctx, append(append([]string{"grmdp"}, cmd...), "--config", cfg), &stdout, &stderr)
			msg := stderr.String()
			switch code {
			case exitOK:
			case exitUsage, exitBadData:
				if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "grmdp: ") {
					t.Fatalf("%v: exit %d without one line:\n%q", cmd, code, msg)
				}
				continue
			default:
				t.Fatalf("%v: exit %d:\n%s", cmd, code, msg)
			}
			o, ok := got.(FederateInitOptions)
			if !ok {
				continue
			}
			var doc struct {
				Sites []string `yaml:"sites"`
			}
			if yaml.Unmarshal(data, &doc) != nil || doc.Sites == nil {
				continue
			}
			var want []string
			for _, s := range doc.Sites {
				if s = strings.TrimSpace(s); s != "" && !strings.ContainsAny(s, "\r") {
					want = append(want, s)
				}
			}
			if len(want) == len(doc.Sites) && !slices.Equal(o.Sites, want) {
				t.Fatalf("sites %q became %q", doc.Sites, o.Sites)
			}
		}
	})
}
