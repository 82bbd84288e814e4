package main

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"
)

// The help texts' layout: the usage line is "grmdp solve [command options]
// DATA...", a command's help lists only its own flags (the global ones
// come before the command), and every flag that takes a value shows a
// placeholder (its usage's `NAME`, or "value") and its default, a switch's
// too.

const usageLine = `{{.FullName}}{{if .VisibleFlags}} [command options]{{end}}{{if .ArgsUsage}} {{.ArgsUsage}}{{end}}`

func init() {
	cli.FlagStringer = flagHelp
	cli.RootCommandHelpTemplate = strings.Replace(cli.RootCommandHelpTemplate, " [command [command options]]", " command [command options]", 1)
	for _, t := range []*string{&cli.CommandHelpTemplate, &cli.SubcommandHelpTemplate} {
		// The usage line runs from USAGE: to the optional CATEGORY section.
		i := strings.Index(*t, "USAGE:\n   ") + len("USAGE:\n   ")
		j := i + strings.Index((*t)[i:], "{{if .Category}}")
		*t = (*t)[:i] + usageLine + (*t)[j:]
	}
}

// flagHelp is flag f's line in a help text: its names with the
// placeholder, a tab, then its usage and default.
func flagHelp(f cli.Flag) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	usage, placeholder := df.GetUsage(), ""
	if i := strings.Index(usage, "`"); i >= 0 {
		if j := strings.Index(usage[i+1:], "`"); j >= 0 {
			placeholder = usage[i+1 : i+1+j]
			usage = usage[:i] + placeholder + usage[i+2+j:]
		}
	}
	if df.TakesValue() && placeholder == "" {
		placeholder = "value"
	}
	def := cmp.Or(df.GetDefaultText(), df.GetValue())
	if n := f.Names()[0]; n == "help" || n == "version" {
		def = ""
	}
	if def != "" {
		usage += fmt.Sprintf(" (default: %s)", def)
	}
	names := cli.FlagNamePrefixer(f.Names(), placeholder)
	if m, ok := f.(cli.DocGenerationMultiValueFlag); ok && m.IsMultiValueFlag() {
		names += " [ " + names + " ]"
	}
	return names + "\t" + strings.TrimSpace(usage)
}
