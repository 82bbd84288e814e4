package solve

import (
	"errors"
	"math"
	"testing"
)

func TestSettingsCheck(t *testing.T) {
	if err := DefaultSettings.Check(); err != nil {
		t.Fatalf("DefaultSettings: %v", err)
	}
	for _, c := range []struct {
		setting string
		change  func(*Settings)
	}{
		{"Lambda", func(s *Settings) { s.Lambda = 0 }},
		{"Lambda", func(s *Settings) { s.Lambda = math.Inf(1) }},
		{"C", func(s *Settings) { s.C = math.NaN() }},
		{"Xi", func(s *Settings) { s.Xi = 1 }},
		{"Beta", func(s *Settings) { s.Beta, s.BetaSet = -1, true }},
		{"Fallback", func(s *Settings) { s.Fallback = "best" }},
		{"Workers", func(s *Settings) { s.Workers = -1 }},
	} {
		s := DefaultSettings
		c.change(&s)
		var se *SettingError
		if err := s.Check(); !errors.As(err, &se) || se.Setting != c.setting {
			t.Errorf("%s: got %v, want a SettingError on %s", c.setting, err, c.setting)
		}
	}
	// An empty Fallback is behaviour, as the solve and the federated
	// coordinator take it.
	noFallback := DefaultSettings
	noFallback.Fallback = ""
	if err := noFallback.Check(); err != nil {
		t.Errorf("Fallback \"\": %v", err)
	}
	if err := Fallback("best").Check(); err == nil || err.Error() != `solve: Fallback must be behaviour or lowest, got "best"` {
		t.Errorf("Fallback.Check: got %v", err)
	}
	if err := (Disclosure{MinCount: 5, MinRows: -1}).Check(); err == nil || err.Error() != "solve: Disclosure.MinRows must not be negative, got -1" {
		t.Errorf("Disclosure: got %v", err)
	}
}
