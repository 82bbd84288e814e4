package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

func TestMake(t *testing.T) {
	for _, n := range []int{0, 1, 1000, MinBytes/8 - 1, MinBytes / 8, 3 << 20} {
		s := Make[float64](n)
		if len(s) != n || cap(s) != n {
			t.Fatalf("Make(%d): len %d cap %d", n, len(s), cap(s))
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("Make(%d)[%d] = %v, want 0", n, i, v)
			}
		}
		for i := range s {
			s[i] = float64(i)
		}
		for i, v := range s {
			if v != float64(i) {
				t.Fatalf("Make(%d)[%d] = %v after writing %d", n, i, v, i)
			}
		}
	}
	s := MakeCap[int32](5, MinBytes)
	if len(s) != 5 || cap(s) != MinBytes {
		t.Fatalf("MakeCap(5, %d): len %d cap %d", MinBytes, len(s), cap(s))
	}
}

// TestAdvised checks, where the kernel says so in /proc/self/smaps, that
// the memory of a large array may be backed by huge pages.
func TestAdvised(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("huge page advice is for Linux only")
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skip("transparent huge pages are not available")
	}
	s := Make[int64](4 * pageSize / 8)
	mid := uintptr(unsafe.Pointer(&s[len(s)/2]))
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in, found := false, false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") && !strings.HasSuffix(strings.Fields(line)[0], ":") {
			in = lo <= mid && mid < hi
			continue
		}
		if in && strings.HasPrefix(line, "THPeligible:") {
			found = true
			if strings.TrimSpace(strings.TrimPrefix(line, "THPeligible:")) != "1" {
				t.Errorf("the array's mapping is not eligible for huge pages: %s", line)
			}
		}
	}
	if !found {
		t.Skip("smaps has no THPeligible field for the array's mapping")
	}
	runtime.KeepAlive(s)
}
