//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// docCommand is one command of a walk-through in the docs and the output
// the docs show for it.
type docCommand struct {
	cmd  string
	want []string
}

// walkthroughCommands reads the section headed heading of a Markdown file
// by the convention docs/FEDERATED.md states for it: a command is an
// indented (4 spaces) line starting with "grmdp " or "for ", with the lines
// its trailing backslashes continue it on and, for a loop, the lines up to
// the loop's done; the indented lines after it (blank ones included),
// up to the next command or the next paragraph, are its printed output,
// "..." standing for lines left out.
func walkthroughCommands(t *testing.T, path, heading string) []docCommand {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no section %q", path, heading)
	}
	text = text[i+len(heading)+2:]
	if j := strings.Index(text, "\n## "); j >= 0 {
		text = text[:j]
	}
	lines := strings.Split(text, "\n")
	isCommand := func(l string) bool {
		return strings.HasPrefix(l, "    grmdp ") || strings.HasPrefix(l, "    for ")
	}
	var cmds []docCommand
	for n := 0; n < len(lines); {
		if !isCommand(lines[n]) {
			n++
			continue
		}
		var cmd []string
		depth := 0 // loops open: a loop ends with the line of its done
		for ; n < len(lines); n++ {
			cmd = append(cmd, strings.TrimPrefix(lines[n], "    "))
			depth += len(loopFor.FindAllString(lines[n], -1)) - len(loopDone.FindAllString(lines[n], -1))
			if depth <= 0 && !strings.HasSuffix(lines[n], "\\") {
				n++
				break
			}
		}
		var out []string
		for ; n < len(lines) && !isCommand(lines[n]); n++ {
			l := lines[n]
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "    ") {
				break
			}
			out = append(out, strings.TrimPrefix(l, "    "))
		}
		cmds = append(cmds, docCommand{strings.Join(cmd, "\n"), trimBlank(out)})
	}
	return cmds
}

// trimBlank drops leading and trailing blank lines and trailing spaces.
func trimBlank(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.TrimRight(l, " \t"))
	}
	for len(out) > 0 && out[0] == "" {
		out = out[1:]
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// loopFor and loopDone match the words that open and close a shell loop.
var loopFor, loopDone = regexp.MustCompile(`(^|[\s;])for\s`), regexp.MustCompile(`(^|[\s;])done\b`)

// randomHex matches job ids, checksums and digests, which differ from run
// to run.
var randomHex = regexp.MustCompile(`[0-9a-f]{16,}`)

// linesMatch reports whether got is want, line for line, once random hex
// strings are masked; a want line "..." (spaces aside) matches any run of
// lines, none included.
func linesMatch(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "..." {
		for k := 0; k <= len(got); k++ {
			if linesMatch(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && randomHex.ReplaceAllString(want[0], "HEX") == randomHex.ReplaceAllString(got[0], "HEX") && linesMatch(want[1:], got[1:])
}

// TestFederatedWalkthrough runs the commands of docs/FEDERATED.md's
// "Three hospitals, end to end", in order, in an empty directory, with the
// built grmdp first on PATH, each with sh -e as a reader pasting it would:
// each succeeds and prints what the docs show (job ids and checksums
// aside); the policy of the rounds played by hand and the one of federate
// run equal the central solve's, bit for bit (w, m, Lambda^{-1}, behaviour
// table, and the decision at every row).
func TestFederatedWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per command")
	}
	bin := federateBinary(t)
	cmds := walkthroughCommands(t, "../../docs/FEDERATED.md", "## Three hospitals, end to end")
	if len(cmds) < 12 || !strings.HasPrefix(cmds[0].cmd, "grmdp simulate ") || !strings.Contains(cmds[0].cmd, "--split-sites hospital-") {
		t.Fatalf("the walk-through has %d commands, the first %q: want it to start from simulate --split-sites hospital-", len(cmds), cmds[0].cmd)
	}
	dir := t.TempDir()
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, c := range cmds {
		if len(c.want) == 0 {
			t.Errorf("the docs show no output for\n%s", c.cmd)
		}
		sh := exec.Command("sh", "-e", "-c", c.cmd)
		sh.Dir, sh.Env = dir, env
		var stdout, stderr bytes.Buffer
		sh.Stdout, sh.Stderr = &stdout, &stderr
		if err := sh.Run(); err != nil {
			t.Fatalf("%s\nfailed: %v\nstdout:\n%s\nstderr:\n%s", c.cmd, err, stdout.String(), stderr.String())
		}
		got := trimBlank(strings.Split(stdout.String(), "\n"))
		if !linesMatch(c.want, got) {
			t.Errorf("%s\nprints\n%s\nbut the docs show\n%s", c.cmd, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
	tb, err := parquetio.Read(context.Background(), []string{filepath.Join(dir, "all.parquet")},
		traj.Options{State: traj.StateSpec{Columns: benchCols, NonzeroSum: true}, Horizon: 7, Actions: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := readPolicyT(t, filepath.Join(dir, "central.parquet"))
	for _, p := range []string{"job/policy.parquet", "job-run/policy.parquet"} {
		got := readPolicyT(t, filepath.Join(dir, p))
		samePolicies(t, p, want, got)
		sameDecisions(t, p, tb, want, got)
	}
}

// The walk-through's reader: commands, continuations, loops and outputs
// with "..." are cut as the convention says, and "..." matches any run of
// lines while random hex strings are masked.
func TestWalkthroughCommands(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "doc.md")
	writeFile(t, doc, "# T\n\n## Walk\n\nText.\n\n    grmdp a \\\n        --b\n\n    one\n\n    two\n\nMore text.\n\n"+
		"    for r in 1 2; do\n      for s in a b; do grmdp c $r$s; done\n    done\n\n    x 0123456789abcdef0123\n    ...\n\n    grmdp d\n\n## Next\n\n    grmdp e\n")
	cmds := walkthroughCommands(t, doc, "## Walk")
	if len(cmds) != 3 || cmds[0].cmd != "grmdp a \\\n    --b" || strings.Join(cmds[0].want, "|") != "one||two" ||
		cmds[1].cmd != "for r in 1 2; do\n  for s in a b; do grmdp c $r$s; done\ndone" || strings.Join(cmds[1].want, "|") != "x 0123456789abcdef0123|..." ||
		cmds[2].cmd != "grmdp d" || len(cmds[2].want) != 0 {
		t.Fatalf("read %q", cmds)
	}
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{"a|...|d", "a|b|c|d", true},
		{"a|...|d", "a|d", true},
		{"a|...", "a", true},
		{"a|...|d", "a|b|c", false},
		{"job 0123456789abcdef0123 x", "job fedcba9876543210fedc x", true},
		{"job 0123 x", "job 4567 x", false},
		{"a|b", "a|b|c", false},
	} {
		if got := linesMatch(strings.Split(tc.want, "|"), strings.Split(tc.got, "|")); got != tc.ok {
			t.Errorf("linesMatch(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}
