package solve

import (
	"fmt"
	"math"
)

// SettingError is a setting whose value cannot be used: Setting names the
// field ("Lambda", "Disclosure.MinCount"), Err says what is wrong in words
// that follow the name. A command line names its own flag instead.
type SettingError struct {
	Setting string
	Err     error
}

func (e *SettingError) Error() string { return "solve: " + e.Setting + " " + e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

func settingErr(setting, format string, args ...any) error {
	return &SettingError{Setting: setting, Err: fmt.Errorf(format, args...)}
}

// Check returns a [*SettingError] on the first field of s a solve cannot
// use: Lambda must be positive and finite, C finite and not negative, Xi in
// (0,1), Beta (when BetaSet) finite and not negative, Fallback one of the
// rules or "" (behaviour, as the solve takes it), Workers not negative.
func (s Settings) Check() error {
	switch {
	case !(s.Lambda > 0) || math.IsInf(s.Lambda, 0):
		return settingErr("Lambda", "must be a positive number, got %v", s.Lambda)
	case !(s.C >= 0) || math.IsInf(s.C, 0):
		return settingErr("C", "must be a nonnegative number, got %v", s.C)
	case !(s.Xi > 0 && s.Xi < 1):
		return settingErr("Xi", "must be in (0,1), got %v", s.Xi)
	case s.BetaSet && (!(s.Beta >= 0) || math.IsInf(s.Beta, 0)):
		return settingErr("Beta", "must be a nonnegative number, got %v", s.Beta)
	case s.Fallback.Check() != nil:
		return s.Fallback.Check()
	case s.Workers < 0:
		return settingErr("Workers", "must not be negative, got %d", s.Workers)
	}
	return nil
}

// Check returns a [*SettingError] ("Fallback") unless f is one of the
// rules or "".
func (f Fallback) Check() error {
	if f != "" && f != FallbackBehaviour && f != FallbackLowest {
		return settingErr("Fallback", "must be %s or %s, got %q", FallbackBehaviour, FallbackLowest, f)
	}
	return nil
}

// Check returns a [*SettingError] on a negative threshold of dc
// ("Disclosure.MinCount", "Disclosure.MinRows").
func (dc Disclosure) Check() error {
	if dc.MinCount < 0 {
		return settingErr("Disclosure.MinCount", "must not be negative, got %d", dc.MinCount)
	}
	if dc.MinRows < 0 {
		return settingErr("Disclosure.MinRows", "must not be negative, got %d", dc.MinRows)
	}
	return nil
}
