package cluster

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error wraps one of
// the package's sentinels, and that every success is a valid partition in
// canonical order that survives a WriteJSON and Parse round trip.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.in), tc.file, tc.opts.Threshold, tc.opts.HasThreshold, tc.opts.M)
	}
	for _, tc := range errorCases {
		f.Add([]byte(tc.in), tc.file, tc.opts.Threshold, tc.opts.HasThreshold, tc.opts.M)
	}
	f.Add([]byte(fiveSites), "s.csv", 0.0, false, 2)
	f.Add([]byte(fiveSites), "s", 0.5, true, 0)
	f.Fuzz(func(t *testing.T, data []byte, name string, threshold float64, hasThreshold bool, m int) {
		opts := Options{Threshold: threshold, HasThreshold: hasThreshold, M: m}
		a, err := Parse(bytes.NewReader(data), name, opts)
		if err != nil {
			if !errors.Is(err, ErrBadSimilarity) && !errors.Is(err, ErrOptions) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if err := checkPartition(a); err != nil {
			t.Fatalf("invalid partition %+v: %v", a.Clusters, err)
		}
		var buf bytes.Buffer
		if err := a.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		b, err := Parse(&buf, "clusters.json", Options{})
		if err != nil {
			t.Fatalf("reading back %s: %v", buf.String(), err)
		}
		if !reflect.DeepEqual(b.Clusters, a.Clusters) {
			t.Fatalf("round trip: got %v, want %v", b.Clusters, a.Clusters)
		}
	})
}
