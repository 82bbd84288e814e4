package dataset

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"1024", 1024}, {"500MB", 500e6}, {"8GiB", 8 << 30}, {"8gib", 8 << 30}, {"1.5GB", 1.5e9},
		{"2G", 2 << 30}, {"512 MiB", 512 << 20}, {"64k", 64 << 10}, {"3TB", 3e12}, {"10B", 10},
	} {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "lots", "-1GB", "8 GiBs", "1e400", "NaN", "GiB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

// The default limit is a sane fraction of the machine. (The estimate
// itself is parquetio's, tested there.)
func TestMemoryModel(t *testing.T) {
	if runtime.GOOS == "linux" {
		lim := DefaultLimit()
		if phys := physicalMemory(); lim <= 0 || lim > phys {
			t.Errorf("default limit %d, physical memory %d", lim, phys)
		}
	}
}

// SetMemoryLimit makes --max-memory the runtime's soft limit; 0 leaves the
// runtime's default (no limit), and GOMEMLIMIT wins.
func TestSetMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	const noLimit = int64(^uint64(0) >> 1) // the runtime's default, math.MaxInt64
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	debug.SetMemoryLimit(noLimit)
	if got := SetMemoryLimit(3 << 30); got != 3<<30 || debug.SetMemoryLimit(-1) != 3<<30 {
		t.Errorf("after SetMemoryLimit(3 GiB) the limit is %d", debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(noLimit)
	if SetMemoryLimit(0); debug.SetMemoryLimit(-1) != noLimit {
		t.Errorf("SetMemoryLimit(0) changed the limit to %d", debug.SetMemoryLimit(-1))
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	if SetMemoryLimit(3 << 30); debug.SetMemoryLimit(-1) != 1<<30 {
		t.Errorf("with GOMEMLIMIT set, SetMemoryLimit changed the limit to %d", debug.SetMemoryLimit(-1))
	}
}

// setReadingHeadroom sets GOGC to readingHeadroom for a reader; with GOGC
// set in the environment it leaves GOGC alone.
func TestSetReadingHeadroom(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	if got := setReadingHeadroom(); got != readingHeadroom || debug.SetGCPercent(100) != readingHeadroom {
		t.Errorf("the headroom became %d, want %d", got, readingHeadroom)
	}
	t.Setenv("GOGC", "100")
	if got := setReadingHeadroom(); got != 100 || debug.SetGCPercent(100) != 100 {
		t.Errorf("with GOGC set the headroom became %d, want 100", got)
	}
}

// TestMissingActionsWording checks the hint for other patterns.
func TestMissingActionsWording(t *testing.T) {
	for _, c := range []struct {
		seen []bool
		want string
	}{
		{[]bool{true, true, true}, ""},
		{[]bool{false, true, true, true}, "action 0 never appears in the data (A = 4 from the largest action 3); if the data are coded 1..3, recode them 0..2; set --actions to say A explicitly"},
		{[]bool{true, false, true, true}, "action 1 never appears in the data (A = 4 from the largest action 3); a row may have a miscoded action, or an action was never taken; set --actions to say A explicitly"},
		{[]bool{true, true, false, true}, "action 2 never appears in the data (A = 4 from the largest action 3); if the data are coded 0..1, a row has a miscoded action; set --actions to say A explicitly"},
	} {
		if got := missingActions(c.seen); got != c.want {
			t.Errorf("%v:\n got %q\nwant %q", c.seen, got, c.want)
		}
	}
}
