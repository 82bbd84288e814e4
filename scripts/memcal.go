//go:build ignore

// Memcal measures the peak memory (maximum resident set size, from
// /usr/bin/time -v) of grmdp's data-reading commands on synthetic inputs of
// several sizes and state widths, and fits the per-row constants of the
// memory model in io/parquetio/estimate.go.
//
//	go build -o /tmp/grmdp ./cmd/grmdp
//	go run scripts/memcal.go -grmdp /tmp/grmdp -dir /tmp/memcal
//
// It prints one line per (feature map, width, rows, command) and, per
// feature map, the least-squares fit of peak RSS = base + rows * perRow.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

func main() {
	bin := flag.String("grmdp", "/tmp/grmdp", "grmdp binary")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "memcal"), "scratch directory")
	sizes := flag.String("rows", "1000000,4000000", "row counts, comma separated")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	type shape struct {
		features string
		w        int // state columns (or list length)
	}
	shapes := []shape{{"action-block", 3}, {"action-block", 12}, {"tabular", 1}, {"precomputed", 40}}
	for _, sh := range shapes {
		var xs, ys []float64
		for _, f := range strings.Split(*sizes, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				log.Fatal(err)
			}
			path := filepath.Join(*dir, fmt.Sprintf("%s-%d-%d.parquet", sh.features, sh.w, n))
			if _, err := os.Stat(path); err != nil {
				if err := synth(path, sh.features, sh.w, n); err != nil {
					log.Fatal(err)
				}
			}
			args := []string{"--features", sh.features}
			if sh.features == "action-block" {
				var cols []string
				for j := 1; j <= sh.w; j++ {
					cols = append(cols, "s"+strconv.Itoa(j))
				}
				args = append(args, "--state", strings.Join(cols, ","))
			}
			for _, cmd := range []string{"inspect", "solve"} {
				a := append([]string{cmd, "--max-memory", "0"}, args...)
				if cmd == "solve" {
					a = append(a, "--workers", "2", "-o", filepath.Join(*dir, "policy.parquet"))
				}
				rss, err := peakRSS(*bin, append(a, path)...)
				if err != nil {
					log.Fatal(err)
				}
				fmt.Printf("%-13s w=%-3d rows=%-9d %-8s peak %7.1f MiB  %6.1f B/row\n", sh.features, sh.w, n, cmd, float64(rss)/(1<<20), float64(rss)/float64(n))
				xs, ys = append(xs, float64(n)), append(ys, float64(rss))
			}
		}
		base, slope := fit(xs, ys)
		fmt.Printf("%-13s w=%-3d fit: peak = %.0f MiB + rows * %.1f B\n\n", sh.features, sh.w, base/(1<<20), slope)
	}
}

// synth writes n rows: 8 sites, episodes of 20 steps, 10 actions.
func synth(path, features string, w, n int) error {
	const sites, H, A = 8, 20, 10
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	var chunks []*traj.Chunk
	c := &traj.Chunk{}
	for i := 0; i < n; i++ {
		if c.Len() == 1<<20 {
			chunks = append(chunks, c)
			c = &traj.Chunk{}
		}
		traj := i / H
		c.SiteInt = append(c.SiteInt, int64(traj%sites))
		c.TrajInt = append(c.TrajInt, int64(traj))
		c.Step = append(c.Step, int64(1+i%H))
		c.ActionInt = append(c.ActionInt, int64(rng.IntN(A)))
		c.Reward = append(c.Reward, rng.Float64())
		switch features {
		case "tabular":
			c.W = 1
			c.State = append(c.State, float64(rng.IntN(50)))
		case "precomputed":
			d := w / A
			c.W = w
			for range A {
				for j := range d {
					c.State = append(c.State, map[bool]float64{true: 1, false: 0}[j == rng.IntN(d)])
				}
			}
		default:
			c.W = w
			for range w {
				c.State = append(c.State, 0.1+rng.Float64())
			}
		}
	}
	chunks = append(chunks, c)
	opts := parquetio.WriteOptions{}
	switch features {
	case "tabular":
		opts.StateColumns = []string{"state"}
	case "precomputed":
		opts.StateColumns, opts.List = []string{"phi"}, true
	default:
		for j := 1; j <= w; j++ {
			opts.StateColumns = append(opts.StateColumns, "s"+strconv.Itoa(j))
		}
	}
	// A precomputed one-hot per action may draw several ones; fix the sums.
	if features == "precomputed" {
		d := w / A
		for _, ch := range chunks {
			for r := 0; r < ch.Len(); r++ {
				for a := range A {
					blk := ch.State[r*w+a*d : r*w+(a+1)*d]
					s := 0.0
					for _, v := range blk {
						s += v
					}
					if s == 0 {
						blk[0], s = 1, 1
					}
					for j := range blk {
						blk[j] /= s
					}
				}
			}
		}
	}
	return parquetio.WriteChunks(path, chunks, opts)
}

// peakRSS runs bin with args under /usr/bin/time -v and returns the
// maximum resident set size in bytes.
func peakRSS(bin string, args ...string) (int64, error) {
	cmd := exec.Command("/usr/bin/time", append([]string{"-v", bin}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "Maximum resident set size (kbytes): "); ok {
			kb, err := strconv.ParseInt(v, 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no maximum resident set size in /usr/bin/time output")
}

func fit(x, y []float64) (base, slope float64) {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	slope = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return (sy - slope*sx) / n, slope
}
