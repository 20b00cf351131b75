package main

// The reference pages in docs/reference are written from the command tree by a hidden command of
// locum itself: the tree is package main's, so a generator in another package could not import
// it, and a copy of it kept elsewhere would drift. TestReferenceIsGenerated holds the committed
// pages to what this writes.
//go:generate go run . help reference ../../docs/reference

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/packs"
)

// referenceIndex is the reference's first page, which GitHub shows for its folder.
const referenceIndex = "README.md"

// generatedNote opens every reference page.
const generatedNote = "<!-- Written by `go generate ./...` (locum help reference) from locum's command tree: do not edit. -->\n\n"

func (e *env) helpReferenceCommand() *cli.Command {
	return &cli.Command{
		Name:         "reference",
		Hidden:       true,
		Usage:        "write the reference pages into DIR: one per command, the settings and the exit codes, replacing the pages there",
		UsageText:    "locum help reference DIR",
		OnUsageError: onUsageError,
		Metadata:     helpOf(commandHelp{examples: []string{"locum help reference docs/reference"}}),
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() != 1 {
				return usagef(cmd, "want one DIR, got %d arguments", cmd.NArg())
			}
			return writeReference(cmd.Args().First(), referencePages(cmd.Root()))
		},
	}
}

// writeReference writes pages into dir and removes every other Markdown page there, so a command
// that is gone takes its page with it.
func writeReference(dir string, pages map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum help reference: %w", err))
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum help reference: %w", err))
	}
	for _, path := range old {
		if _, keep := pages[filepath.Base(path)]; !keep {
			if err := os.Remove(path); err != nil {
				return withCode(exitCouldNot, fmt.Errorf("locum help reference: %w", err))
			}
		}
	}
	for name, data := range pages {
		if err := atomicfile.Write(filepath.Join(dir, name), data, 0o644); err != nil {
			return withCode(exitCouldNot, fmt.Errorf("locum help reference: %w", err))
		}
	}
	return nil
}

// referencePages are the pages of docs/reference by file name: the index, one page per command
// with its subcommands, every setting, and the exit codes.
func referencePages(root *cli.Command) map[string][]byte {
	pages := map[string][]byte{
		referenceIndex:  []byte(generatedNote + indexMarkdown(root)),
		"settings.md":   []byte(generatedNote + settingsMarkdown(packs.SettingDocs())),
		"exit-codes.md": []byte(generatedNote + exitCodesMarkdown(root)),
	}
	for _, s := range groupedCommands(root) {
		for _, c := range s.commands {
			name := pageName(c)
			if _, dup := pages[name]; dup {
				panic(fmt.Sprintf("locum help reference: two pages named %s", name))
			}
			var b strings.Builder
			b.WriteString(generatedNote)
			commandMarkdown(&b, c, 1)
			pages[name] = []byte(b.String())
		}
	}
	return pages
}

// pageName is the reference page of a command of the root.
func pageName(cmd *cli.Command) string { return cmd.Name + ".md" }

// commandLink is where the reference shows a command: its page, at its heading for a subcommand.
func commandLink(cmd *cli.Command) string {
	top := cmd
	for top.Lineage()[1] != cmd.Root() {
		top = top.Lineage()[1]
	}
	if top == cmd {
		return pageName(cmd)
	}
	return pageName(top) + "#" + strings.ReplaceAll(cmd.FullName(), " ", "-")
}

func indexMarkdown(root *cli.Command) string {
	var b strings.Builder
	p := pageOf(root)
	b.WriteString("# locum reference\n\n")
	b.WriteString(mdEscape(capitalize(p.usage)) + ". Every command's help (`locum help COMMAND`) as a page: its usage, examples, " +
		"flags by group with their defaults, and exit codes. Beside them, [every setting](settings.md) and " +
		"[the exit codes](exit-codes.md).\n\n")
	fmt.Fprintf(&b, "```text\n%s\n```\n\n", strings.Join(p.usageLines, "\n"))
	fmt.Fprintf(&b, "```text\n%s\n```\n\n", strings.TrimRight(p.description, "\n"))
	b.WriteString("## Commands\n\n")
	for _, s := range p.commands {
		fmt.Fprintf(&b, "### %s\n\n| command | what it does |\n| --- | --- |\n", capitalize(s.group))
		for _, c := range s.commands {
			fmt.Fprintf(&b, "| [`%s`](%s) | %s |\n", c.FullName(), commandLink(c), mdEscape(c.Usage))
		}
		b.WriteString("\n")
	}
	writeExamplesMarkdown(&b, p.examples, 2)
	writeFlagsMarkdown(&b, p, 2)
	writeExitsMarkdown(&b, p.exits, 2)
	b.WriteString("The same three codes for every command; [exit-codes.md](exit-codes.md) says what each means for each.\n")
	return b.String()
}

// commandMarkdown writes a command's section at heading level, then each subcommand's one level
// below.
func commandMarkdown(b *strings.Builder, cmd *cli.Command, level int) {
	p := pageOf(cmd)
	fmt.Fprintf(b, "%s %s\n\n%s\n\n", strings.Repeat("#", level), p.name, mdEscape(capitalize(p.usage))+".")
	fmt.Fprintf(b, "```text\n%s\n```\n\n", strings.Join(p.usageLines, "\n"))
	if p.description != "" {
		fmt.Fprintf(b, "```text\n%s\n```\n\n", strings.TrimRight(p.description, "\n"))
	}
	if len(p.commands) > 0 {
		fmt.Fprintf(b, "%s Commands\n\n| command | what it does |\n| --- | --- |\n", strings.Repeat("#", level+1))
		for _, c := range p.commands[0].commands {
			fmt.Fprintf(b, "| [`%s`](#%s) | %s |\n", c.FullName(), strings.ReplaceAll(c.FullName(), " ", "-"), mdEscape(c.Usage))
		}
		b.WriteString("\n")
	}
	writeExamplesMarkdown(b, p.examples, level+1)
	writeFlagsMarkdown(b, p, level+1)
	writeExitsMarkdown(b, p.exits, level+1)
	if p.changeable {
		b.WriteString("A pack or the workspace may change a default; [settings.md](settings.md) says which settings only the operator may set.\n\n")
	}
	for _, sub := range visibleCommands(cmd) {
		commandMarkdown(b, sub, level+1)
	}
}

func writeExamplesMarkdown(b *strings.Builder, examples []string, level int) {
	if len(examples) == 0 {
		return
	}
	fmt.Fprintf(b, "%s Examples\n\n```console\n", strings.Repeat("#", level))
	for _, ex := range examples {
		b.WriteString("$ " + ex + "\n")
	}
	b.WriteString("```\n\n")
}

func writeFlagsMarkdown(b *strings.Builder, p helpPage, level int) {
	for _, s := range p.flags {
		fmt.Fprintf(b, "%s %s\n\n| flag | default | what it does |\n| --- | --- | --- |\n", strings.Repeat("#", level), capitalize(strings.ToLower(sectionTitle(s.group, p.root))))
		for _, r := range s.rows {
			def := ""
			if r.def != "" {
				def = "`" + r.def + "`"
			}
			text := mdEscape(r.usage)
			if r.env != "" {
				text += " (env `" + r.env + "`)"
			}
			fmt.Fprintf(b, "| `%s` | %s | %s |\n", r.left(), def, text)
		}
		b.WriteString("\n")
	}
}

func writeExitsMarkdown(b *strings.Builder, exits []exitLine, level int) {
	fmt.Fprintf(b, "%s Exit codes\n\n| code | meaning |\n| --- | --- |\n", strings.Repeat("#", level))
	for _, l := range exits {
		fmt.Fprintf(b, "| %d | %s |\n", l.code, mdEscape(l.meaning))
	}
	b.WriteString("\n")
}

func exitCodesMarkdown(root *cli.Command) string {
	var b strings.Builder
	b.WriteString("# Exit codes\n\nEvery locum command exits with one of three codes (`locum help exit-codes`):\n\n")
	b.WriteString("| code | meaning | when |\n| --- | --- | --- |\n")
	for code, m := range exitCodes {
		fmt.Fprintf(&b, "| %d | %s | %s |\n", code, mdEscape(m.words), mdEscape(m.cases))
	}
	b.WriteString("\n## What each says of each command\n\n| command | 0 | 1 | 2 |\n| --- | --- | --- | --- |\n")
	for _, c := range commandsOf(root) {
		cells := []string{"", "never", ""}
		for _, l := range helpOfCommand(c).exits.lines() {
			cells[l.code] = mdEscape(l.meaning)
		}
		fmt.Fprintf(&b, "| [`%s`](%s) | %s |\n", c.FullName(), commandLink(c), strings.Join(cells, " | "))
	}
	return b.String()
}

// settingGroupTitle is a group's heading on the settings page.
func settingGroupTitle(g packs.Group) string {
	if g == packs.GroupCommand {
		return "A few modes' own"
	}
	return capitalize(string(g))
}

func settingsMarkdown(docs []packs.SettingDoc) string {
	var b strings.Builder
	b.WriteString("# Settings\n\nEvery setting once (`locum help settings`), by the group its flag stands in on a command's help. " +
		mdEscape(strings.ReplaceAll(settingsIntro, "\n", " ")) + "\n")
	for _, g := range append([]packs.Group{packs.GroupCommand}, packs.Groups...) {
		fmt.Fprintf(&b, "\n## %s\n", settingGroupTitle(g))
		for _, d := range docs {
			if d.Group != g {
				continue
			}
			fmt.Fprintf(&b, "\n### `%s`\n\n%s\n\n", d.Key, mdEscape(capitalize(d.Doc))+".")
			var names []string
			if d.Flag != "" {
				names = append(names, "flag `--"+d.Flag+"`")
			}
			if d.Env != "" {
				names = append(names, "environment `"+d.Env+"`")
			}
			def := "unset"
			if d.Default != "" {
				def = "`" + d.Default + "`"
			}
			names = append(names, "default "+def)
			fmt.Fprintf(&b, "- %s\n- values: %s\n- modes: %s\n- set by: %s\n", strings.Join(names, ", "), mdEscape(settingValues(d)), mdEscape(settingModes(d)), mdEscape(setBy(d)))
		}
	}
	return b.String()
}

// capitalize puts the first letter of s in upper case.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// mdEscape makes text read as itself in Markdown, in a paragraph or a table's cell.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if slices.Contains([]rune("\\`*_[]<>|#"), r) {
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
