package parquetio_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/grmdp/grmdp/io/parquetio"
)

// FuzzReadPolicy feeds corrupted policy files to ReadPolicy: it must return
// rows and metadata or an error wrapping one of the sentinels, and never
// panic or hang. The seed is a policy file as grmdp solve writes it (a few
// steps and groups, PEVI inverses, a behaviour table, JSON metadata).
func FuzzReadPolicy(f *testing.F) {
	rows := []parquetio.PolicyRow{
		{Step: 1, Group: 0, W: []float64{0.5, 0.25, 1}, M: []float64{0.1, 0.2, 0.3}},
		{Step: 1, Group: 1, W: []float64{0.4, 0.2, 0.9}, Linv: []float64{1, 0.5, 0.25, 0.1, 0.2, 0.3}},
		{Step: 1, Group: -1, Fallback: []int32{0, 1, 1}},
		{Step: 2, Group: 0, W: []float64{0, 0, 0.75}, M: []float64{0.3, 0.2, 0.1}},
		{Step: 2, Group: 1, W: []float64{0.1, 0.2, 0.3}, Linv: []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}},
		{Step: 2, Group: -1, Fallback: []int32{2, 0, 1}},
	}
	meta := map[string]string{"grmdp.policy": `{"format":1,"method":"sitewise","H":2,"d":3,"actions":3,"feature_map":{"kind":1,"actions":3,"states":1,"state_columns":["state"]}}`}
	path := filepath.Join(f.TempDir(), "policy.parquet")
	if err := parquetio.WritePolicy(path, rows, meta); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, 0, byte(0), 0)
	f.Add(data, len(data)/2, byte(0xff), 0)
	f.Add(data, len(data)-9, byte(0x40), 0)
	f.Add(data, 4, byte(1), len(data)/3)
	f.Add(data, 0, byte(0), len(data)-12) // truncated: a footer without its data
	// One file per worker process, rewritten for every input: a fresh
	// temporary directory per input would cost more than the read.
	work := filepath.Join(f.TempDir(), "p.parquet")
	f.Fuzz(func(t *testing.T, data []byte, at int, b byte, cut int) {
		data = bytes.Clone(data)
		if len(data) > 0 {
			at = ((at % len(data)) + len(data)) % len(data)
			data[at] ^= b
			// Cut out a range (a truncated or spliced file) when asked.
			if cut = ((cut % len(data)) + len(data)) % len(data); cut > 0 && cut < at {
				data = append(data[:cut], data[at:]...)
			}
		}
		if err := os.WriteFile(work, data, 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, _, err := parquetio.ReadPolicy(work)
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadPolicy did not return within 10s")
		}
		if err != nil && !errors.Is(err, parquetio.ErrParquet) && !errors.Is(err, parquetio.ErrSchema) &&
			!errors.Is(err, parquetio.ErrBadData) {
			t.Errorf("error %v wraps no sentinel", err)
		}
	})
}
