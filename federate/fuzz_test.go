package federate

// Corrupted message files: every corruption of a real message of every
// kind (flipped bytes, truncation, header fields of another JSON type or
// value with the checksum made to match) is refused with one error naming
// the file, never a panic; FuzzReadMessage runs the same checks over
// arbitrary files, from a seed corpus of real messages.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/io/msgio"
)

// seedMessages returns the real messages in testdata/messages (a solve
// round's, the value round's, an evaluation round's and an evaluation's
// last round's, of a sitewise action-block job) by name.
func seedMessages(t testing.TB) map[string][]byte {
	files, err := filepath.Glob(filepath.Join("testdata", "messages", "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed messages: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// seedJob returns the job the seed messages belong to.
func seedJob(t testing.TB) *Job {
	j := &Job{}
	if err := readJSON(filepath.Join("testdata", "messages", JobFile), j); err != nil {
		t.Fatal(err)
	}
	return j
}

// readFile reads a message file as the coordinator does.
func readFile(path string) (*Message, error) {
	meta, vecs, err := msgio.Read(path)
	if err != nil {
		return nil, err
	}
	fv := make([]Vec, len(vecs))
	for i, v := range vecs {
		fv[i] = Vec(v)
	}
	return Decode(path, meta, fv)
}

// useMessage does with a decoded message what the commands do: prints its
// features' names, encodes it again, checks it against the job and folds
// it (refused: the other sites are missing).
func useMessage(j *Job, path string, m *Message) error {
	for i := range m.Counts {
		_ = featureName(&m.Map, i)
	}
	if _, _, err := m.Encode(); err != nil {
		return err
	}
	if _, err := json.Marshal(m); err != nil {
		return err
	}
	in := []Incoming{{File: path, Msg: m}}
	if _, err := Fold(context.Background(), j, NewState(j), in); err == nil {
		return errors.New("folded one message of three sites")
	}
	return nil
}

// checkCorrupted reads the file at path and fails unless it is read, or
// refused with one error naming the file (ErrRefused or msgio.ErrBadFile).
func checkCorrupted(t *testing.T, j *Job, path, what string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s: panic %v", what, r)
		}
	}()
	m, err := readFile(path)
	if err != nil {
		if !errors.Is(err, ErrRefused) && !errors.Is(err, msgio.ErrBadFile) {
			t.Fatalf("%s: error %v is neither a refusal nor a bad file", what, err)
		}
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("%s: error %q does not name the file", what, err)
		}
		return
	}
	if err := useMessage(j, path, m); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// jsonVariants are values of every JSON type a header field is set to.
var jsonVariants = []string{`null`, `-1`, `1e308`, `0.5`, `"x"`, `[1,2]`, `{}`, `{"kind":7}`, `{"kind":"tabular","actions":-3}`,
	`{"kind":"precomputed","actions":2,"d_per_action":-1}`, `{"kind":"binned","actions":2,"bins":[{"column":"x","cuts":[1,0]}]}`}

func TestCorruptedMessages(t *testing.T) {
	j := seedJob(t)
	dir := t.TempDir()
	for name, b := range seedMessages(t) {
		path := filepath.Join(dir, name)
		write := func(data []byte) {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(b)
		checkCorrupted(t, j, path, name)
		for _, n := range []int{0, 4, 8, len(b) / 3, len(b) / 2, len(b) - 9, len(b) - 1} {
			write(b[:n])
			checkCorrupted(t, j, path, name+" truncated")
		}
		for i := 0; i < len(b); i += 11 {
			c := append([]byte(nil), b...)
			c[i] ^= 0x5a
			write(c)
			checkCorrupted(t, j, path, name+" flipped")
		}
		// Header fields of another type or value, checksum made to match.
		write(b)
		meta, vecs, err := msgio.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		var hd map[string]json.RawMessage
		if err := json.Unmarshal([]byte(meta[MetaKey]), &hd); err != nil {
			t.Fatal(err)
		}
		for key := range hd {
			for _, v := range jsonVariants {
				c := map[string]json.RawMessage{}
				for k, x := range hd {
					c[k] = x
				}
				c[key] = json.RawMessage(v)
				raw, _ := json.Marshal(c)
				if m := (&Message{}); json.Unmarshal(raw, m) == nil {
					// seal what the body parses to, so that the checksum
					// matches and the checks behind it run.
					if sum, err := m.sum(); err == nil {
						c["checksum"], _ = json.Marshal(sum)
					}
					raw, _ = json.Marshal(c)
				}
				if err := msgio.Write(path, map[string]string{MetaKey: string(raw)}, vecs); err != nil {
					t.Fatal(err)
				}
				checkCorrupted(t, j, path, name+" "+key+"="+v)
			}
		}
		// vectors of other lengths and values, checksum made to match.
		for i := range vecs {
			for _, vals := range [][]float64{nil, {}, {-1}, {1e308, -1e308}, append(append([]float64(nil), vecs[i].Values...), 1)} {
				cv := append([]msgio.Vector(nil), vecs...)
				cv[i].Values = vals
				fv := make([]Vec, len(cv))
				for k, v := range cv {
					fv[k] = Vec(v)
				}
				hdm := &Message{}
				json.Unmarshal([]byte(meta[MetaKey]), hdm)
				// Reseal: decode the header, set the vectors, seal.
				full := *hdm
				full.Gram, full.Counts, full.Behaviour, full.RHS, full.Extra = nil, nil, nil, make([][]float64, len(full.Runs)), nil
				for _, v := range fv {
					switch {
					case v.Name == "gram":
						full.Gram = v.Values
					case v.Name == "counts":
						full.Counts = v.Values
					case v.Name == "behaviour":
						full.Behaviour = v.Values
					case v.Name == "rhs" && int(v.Index) < len(full.RHS):
						full.RHS[v.Index] = v.Values
					default:
						full.Extra = append(full.Extra, v)
					}
				}
				full.seal()
				hdr, _ := json.Marshal(&full)
				if err := msgio.Write(path, map[string]string{MetaKey: string(hdr)}, cv); err != nil {
					t.Fatal(err)
				}
				checkCorrupted(t, j, path, name+" vector "+vecs[i].Name)
			}
		}
	}
}

// FuzzReadMessage reads arbitrary files as message files: each is read,
// or refused with one error naming the file, never a panic. Its seed
// corpus is the real messages in testdata/messages, run by an ordinary
// go test.
func FuzzReadMessage(f *testing.F) {
	for _, b := range seedMessages(f) {
		f.Add(b)
	}
	j := seedJob(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "msg.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		checkCorrupted(t, j, path, "fuzzed message")
	})
}
