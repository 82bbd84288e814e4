package timing

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStartWithoutRecorder(t *testing.T) {
	ctx := context.Background()
	if From(ctx) != nil {
		t.Fatal("a bare context carries a recorder")
	}
	Start(ctx, "nothing")() // must not panic or record anywhere
}

func TestPhasesAddUp(t *testing.T) {
	r := New()
	ctx := With(context.Background(), r)
	stop := Start(ctx, "outer")
	for range 3 {
		s := Start(ctx, "round")
		time.Sleep(2 * time.Millisecond)
		s()
	}
	stop()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { Start(ctx, "parallel")() })
	}
	wg.Wait()

	ps := r.Phases()
	if len(ps) != 3 {
		t.Fatalf("got %d phases, want 3: %+v", len(ps), ps)
	}
	outer, round, par := ps[0], ps[1], ps[2]
	if outer.Name != "outer" || round.Name != "round" || par.Name != "parallel" {
		t.Fatalf("phases out of their first-start order: %+v", ps)
	}
	if round.Count != 3 || outer.Count != 1 || par.Count != 4 {
		t.Fatalf("counts %d, %d, %d; want 3, 1, 4", round.Count, outer.Count, par.Count)
	}
	if round.Total <= 0 {
		t.Fatalf("three rounds add up to %v", round.Total)
	}
	if outer.Total < round.Total {
		t.Fatalf("the outer phase (%v) is shorter than the rounds inside it (%v)", outer.Total, round.Total)
	}
	if round.First < outer.First {
		t.Fatalf("the rounds began (%v) before the phase around them (%v)", round.First, outer.First)
	}

	var b bytes.Buffer
	r.Write(&b)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("Write printed %d lines, want 4:\n%s", len(lines), b.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "grmdp: timing: ") {
			t.Fatalf("line without the prefix: %q", l)
		}
	}
	if !strings.Contains(lines[1], "round") || !strings.Contains(lines[1], "(3 times)") {
		t.Fatalf("the rounds' line does not say how many: %q", lines[1])
	}
	if !strings.Contains(lines[3], "whole run") {
		t.Fatalf("last line is not the whole run: %q", lines[3])
	}
}
