package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
)

// helpWidth is the width help wraps its prose to.
const helpWidth = 100

// The groups of commands the root help lists, in its order.
const (
	groupDelegate = "delegate"
	groupReview   = "review"
	groupInspect  = "inspect"
	groupSetUp    = "set up"
)

var commandGroups = []string{groupDelegate, groupReview, groupInspect, groupSetUp}

// helpKey is the key of a command's commandHelp in its Metadata.
const helpKey = "locum.help"

// commandHelp is what a command's help shows beyond what urfave/cli holds: worked examples, each
// a command line as a person types it, and what its exit codes say.
type commandHelp struct {
	examples []string
	exits    exitWords
}

// helpOf is a command's Metadata holding h.
func helpOf(h commandHelp) map[string]any { return map[string]any{helpKey: h} }

// helpOfCommand is the commandHelp a command declares; none for one urfave/cli made.
func helpOfCommand(cmd *cli.Command) commandHelp {
	h, _ := cmd.Metadata[helpKey].(commandHelp)
	return h
}

func init() {
	// urfave/cli's templates order flag groups and commands by name; locum's help keeps the order
	// it declares them in and adds examples and exit codes, so it prints its own.
	cli.HelpPrinter = printHelp
}

func printHelp(w io.Writer, templ string, data any) {
	cmd, ok := data.(*cli.Command)
	if !ok {
		cli.DefaultPrintHelp(w, templ, data)
		return
	}
	writeHelp(w, pageOf(cmd))
}

// helpPage is one command's help as data: the terminal's help and its page in docs/reference are
// both written from it.
type helpPage struct {
	root                 bool
	name, usage, version string
	usageLines           []string
	description          string
	commands             []commandSection
	examples             []string
	flags                []flagSection
	exits                []exitLine
	// changeable says a default the page shows is one a pack or the workspace may change.
	changeable bool
}

// commandSection is a group of commands; group is "" for a command's subcommands.
type commandSection struct {
	group    string
	commands []*cli.Command
}

// flagSection is a group of flags: group is "" for the command's own, a packs.Group for the
// settings of its kind, or "global" for the flags a parent command hands down.
type flagSection struct {
	group string
	rows  []flagRow
}

const globalFlags = "global"

// flagRow is one flag: its names with dashes, the kind of value it takes ("" for a switch), its
// default, what it does and its environment variable.
type flagRow struct {
	name, value, def, usage, env string
}

func pageOf(cmd *cli.Command) helpPage {
	h := helpOfCommand(cmd)
	p := helpPage{root: cmd.Root() == cmd, name: cmd.FullName(), usage: cmd.Usage, description: cmd.Description, examples: h.examples}
	usage := cmd.UsageText
	if usage == "" {
		usage = usageLine(cmd)
	}
	for _, l := range strings.Split(usage, "\n") {
		p.usageLines = append(p.usageLines, strings.TrimSpace(l))
	}
	if p.root {
		p.version = cmd.Version
		p.exits = sharedExitLines()
		p.commands = groupedCommands(cmd)
	} else {
		p.exits = h.exits.lines()
		if subs := visibleCommands(cmd); len(subs) > 0 {
			p.commands = []commandSection{{commands: subs}}
		}
	}
	p.flags, p.changeable = flagSections(cmd.VisibleFlags())
	if !p.root {
		var rows []flagRow
		for _, f := range cmd.VisiblePersistentFlags() {
			row, _ := rowOf(f)
			rows = append(rows, row)
		}
		if len(rows) > 0 {
			p.flags = append(p.flags, flagSection{group: globalFlags, rows: rows})
		}
	}
	return p
}

// visibleCommands are the subcommands help lists: urfave/cli's own list leaves out any named
// help, which locum's root has.
func visibleCommands(cmd *cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cmd.Commands {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

// groupedCommands are the root's commands by group, in commandGroups' order and each group in
// the order the root declares them; a command in no known group comes last, under its own.
func groupedCommands(root *cli.Command) []commandSection {
	var out []commandSection
	at := map[string]int{}
	for _, g := range commandGroups {
		at[g] = len(out)
		out = append(out, commandSection{group: g})
	}
	for _, c := range visibleCommands(root) {
		i, ok := at[c.Category]
		if !ok {
			at[c.Category] = len(out)
			out = append(out, commandSection{group: c.Category})
			i = len(out) - 1
		}
		out[i].commands = append(out[i].commands, c)
	}
	return slices.DeleteFunc(out, func(s commandSection) bool { return len(s.commands) == 0 })
}

// commandsOf is every command below root that help lists, depth first in help's order.
func commandsOf(root *cli.Command) []*cli.Command {
	var out []*cli.Command
	var walk func(*cli.Command)
	walk = func(c *cli.Command) {
		out = append(out, c)
		for _, sub := range visibleCommands(c) {
			walk(sub)
		}
	}
	for _, s := range groupedCommands(root) {
		for _, c := range s.commands {
			walk(c)
		}
	}
	return out
}

// flagSections are a command's flags: its own first, then the settings' groups in packs.Groups'
// order, each in the order the command declares them. changeable says one shows a default that
// a pack or the workspace may change.
func flagSections(flags []cli.Flag) (out []flagSection, changeable bool) {
	order := []string{""}
	for _, g := range packs.Groups {
		order = append(order, string(g))
	}
	byGroup := map[string][]flagRow{}
	for _, f := range flags {
		group := ""
		if cf, ok := f.(cli.CategorizableFlag); ok {
			group = cf.GetCategory()
		}
		if !slices.Contains(order, group) {
			order = append(order, group)
		}
		row, spec := rowOf(f)
		byGroup[group] = append(byGroup[group], row)
		changeable = changeable || spec.Repository && row.def != ""
	}
	for _, g := range order {
		if rows := byGroup[g]; len(rows) > 0 {
			out = append(out, flagSection{group: g, rows: rows})
		}
	}
	return out, changeable
}

// rowOf is a flag as help lists it, and the setting it sets (the zero FlagSpec for a flag of the
// command's own).
func rowOf(f cli.Flag) (flagRow, packs.FlagSpec) {
	var names []string
	for _, n := range f.Names() {
		if utf8.RuneCountInString(n) == 1 {
			names = append(names, "-"+n)
		} else {
			names = append(names, "--"+n)
		}
	}
	row := flagRow{name: strings.Join(names, ", ")}
	spec, _ := settingOf(f)
	if df, ok := f.(cli.DocGenerationFlag); ok {
		row.usage, row.def = df.GetUsage(), df.GetDefaultText()
		if df.TakesValue() {
			row.value = df.TypeName()
			if spec.Form().Duration {
				row.value = "duration"
			}
		}
	}
	row.env = spec.Env
	return row, spec
}

// settingOf is the setting a flag sets. A setting's flag is declared from the table in package
// packs (declareFlags), with the setting's own words, so the flag is known by its name and its
// words: a command's own flag that shares a setting's name (transform's --model, eval's --role)
// says something else.
func settingOf(f cli.Flag) (packs.FlagSpec, bool) {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return packs.FlagSpec{}, false
	}
	for _, s := range packs.AllFlags() {
		if s.Name == f.Names()[0] && s.Doc == df.GetUsage() {
			return s, true
		}
	}
	return packs.FlagSpec{}, false
}

// sectionTitle is the heading of a group of flags or commands.
func sectionTitle(group string, root bool) string {
	switch group {
	case "":
		if root {
			return "GLOBAL OPTIONS"
		}
		return "OPTIONS"
	case globalFlags:
		return "GLOBAL OPTIONS"
	}
	return strings.ToUpper(group)
}

// defaultsNote is said once, under the flags, rather than beside each default.
const defaultsNote = "A pack or the workspace may change a default; locum help settings says which settings only the operator may set."

// rootNote points at the rest of the help.
const rootNote = "locum help COMMAND shows a command's flags and examples; locum help settings lists every setting; " +
	"locum help exit-codes says what each exit code means for each command."

// writeHelp prints a command's help for a terminal.
func writeHelp(w io.Writer, p helpPage) {
	var b strings.Builder
	section := func(title string) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(title + ":\n")
	}
	section("NAME")
	line := p.name
	if p.usage != "" {
		line += " - " + p.usage
	}
	b.WriteString("   " + wrapText(line, helpWidth-3, strings.Repeat(" ", 3+utf8.RuneCountInString(p.name)+3)) + "\n")
	section("USAGE")
	for _, l := range p.usageLines {
		b.WriteString("   " + l + "\n")
	}
	if p.version != "" {
		section("VERSION")
		b.WriteString("   " + p.version + "\n")
	}
	if p.description != "" {
		section("DESCRIPTION")
		for _, l := range strings.Split(strings.TrimRight(p.description, "\n"), "\n") {
			if l != "" {
				l = "   " + l
			}
			b.WriteString(l + "\n")
		}
	}
	writeCommandSections(&b, p, section)
	if len(p.examples) > 0 {
		section("EXAMPLES")
		for _, ex := range p.examples {
			b.WriteString("   $ " + ex + "\n")
		}
	}
	writeFlagSections(&b, p, section)
	section("EXIT CODES")
	for _, l := range p.exits {
		fmt.Fprintf(&b, "   %d  %s\n", l.code, wrapText(l.meaning, helpWidth-6, strings.Repeat(" ", 6)))
	}
	switch {
	case p.root:
		b.WriteString("\n" + wrapText(rootNote, helpWidth, "") + "\n")
	case p.changeable:
		b.WriteString("\n" + wrapText(defaultsNote, helpWidth, "") + "\n")
	}
	_, _ = io.WriteString(w, b.String())
}

func writeCommandSections(b *strings.Builder, p helpPage, section func(string)) {
	width := 0
	for _, s := range p.commands {
		for _, c := range s.commands {
			width = max(width, utf8.RuneCountInString(strings.Join(c.Names(), ", ")))
		}
	}
	for _, s := range p.commands {
		title := "COMMANDS"
		if s.group != "" {
			title = strings.ToUpper(s.group)
		}
		section(title)
		col := 3 + width + 2
		for _, c := range s.commands {
			name := strings.Join(c.Names(), ", ")
			b.WriteString("   " + pad(name, width) + "  " + wrapText(c.Usage, max(helpWidth-col, 40), strings.Repeat(" ", col)) + "\n")
		}
	}
}

// The widest a flag's name and its default may be before its words start on the next line.
const (
	flagNameCap = 30
	flagDefCap  = 14
)

func writeFlagSections(b *strings.Builder, p helpPage, section func(string)) {
	// A name or a default past its cap overflows its own row alone.
	nameW, defW := 0, 0
	for _, s := range p.flags {
		for _, r := range s.rows {
			if n := utf8.RuneCountInString(r.left()); n <= flagNameCap {
				nameW = max(nameW, n)
			}
			if n := utf8.RuneCountInString(r.def); n <= flagDefCap {
				defW = max(defW, n)
			}
		}
	}
	col := 3 + nameW + 2
	if defW > 0 {
		col += defW + 2
	}
	for _, s := range p.flags {
		section(sectionTitle(s.group, p.root))
		for _, r := range s.rows {
			head := "   " + pad(r.left(), nameW)
			if r.def != "" {
				head += "  " + r.def
			}
			text := r.usage
			if r.env != "" {
				text += " (env " + r.env + ")"
			}
			words := wrapText(text, max(helpWidth-col, 40), strings.Repeat(" ", col))
			if n := utf8.RuneCountInString(head); n+2 > col {
				b.WriteString(head + "\n" + strings.Repeat(" ", col) + words + "\n")
				continue
			}
			b.WriteString(pad(head, col) + words + "\n")
		}
	}
}

// left is the flag's column: its names and the kind of value it takes.
func (r flagRow) left() string {
	if r.value == "" {
		return r.name
	}
	return r.name + " " + r.value
}

// pad fills s with spaces to width runes.
func pad(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// wrapText breaks s at spaces into lines of at most width runes (a longer word stands alone on
// its line), every line after the first starting with indent.
func wrapText(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		w := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case n+1+w > width:
			b.WriteString("\n" + indent)
			n = 0
		default:
			b.WriteString(" ")
			n++
		}
		b.WriteString(word)
		n += w
	}
	return b.String()
}
