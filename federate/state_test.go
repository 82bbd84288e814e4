package federate

import (
	"encoding/json"
	"testing"
)

// roundTripState passes s through its JSON file form, as the rounds of a
// job do between processes.
func roundTripState(t testing.TB, s *State) *State {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	out := &State{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}
