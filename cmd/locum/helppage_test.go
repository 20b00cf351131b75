package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"
	"mvdan.cc/sh/v3/shell"

	"github.com/locumdev/locum/packs"
)

// allCommands is every command of the tree, hidden ones too, depth first.
func allCommands(root *cli.Command) []*cli.Command {
	out := []*cli.Command{root}
	for _, sub := range root.Commands {
		out = append(out, allCommands(sub)...)
	}
	return out
}

// exampleTree is the command tree with every action replaced by one that records the command it
// reached, so an example parses as a run would without doing anything.
func exampleTree(reached **cli.Command) *cli.Command {
	record := func(_ context.Context, c *cli.Command) error {
		*reached = c
		return nil
	}
	root := (&env{stdout: io.Discard, stderr: io.Discard}).rootCommand()
	for _, c := range allCommands(root) {
		c.Action = record
	}
	// urfave/cli makes the completion command when the root runs: its actions are replaced then.
	root.ConfigureShellCompletionCommand = func(c *cli.Command) {
		configureCompletion(c)
		for _, sub := range allCommands(c) {
			sub.Action = record
		}
	}
	return root
}

// exampleProblem says what is wrong with an example of the command named owner ("" for the
// root's, which may run any command): a line that is not locum's, a flag the command does not
// take, a command it does not reach, a setting's value the resolver refuses; "" when nothing is.
func exampleProblem(owner, ex string) string {
	argv, err := shell.Fields(ex, func(string) string { return "" })
	if err != nil {
		return err.Error()
	}
	if len(argv) == 0 || argv[0] != "locum" {
		return "not a locum command line"
	}
	var reached *cli.Command
	if err := exampleTree(&reached).Run(context.Background(), argv); err != nil {
		// A run's usage error is printed, with its receipt, and carries no words of its own.
		return "it does not parse: " + err.Error()
	}
	if reached == nil {
		return "it reaches no command"
	}
	// A command with subcommands may show theirs.
	if owner != "" && reached.FullName() != owner && !strings.HasPrefix(reached.FullName(), owner+" ") {
		return "it runs " + reached.FullName()
	}
	for _, f := range reached.Flags {
		spec, ok := settingOf(f)
		if !ok {
			continue
		}
		for flag, value := range givenFlags(reached, []packs.FlagSpec{spec}) {
			if err := packs.CheckFlag(flag, value); err != nil {
				return err.Error()
			}
		}
	}
	return ""
}

// Every command's help shows two or three worked examples (one where the command takes no flag of
// its own), and each is a command line that parses with that command's own flags and reaches it:
// a renamed flag, a dropped subcommand or a setting's value the resolver refuses fails here.
func TestEveryExampleParses(t *testing.T) {
	root := commandTree(t)
	assert.Len(t, helpOfCommand(root).examples, 3)
	for _, ex := range helpOfCommand(root).examples {
		assert.Empty(t, exampleProblem("", ex), ex)
	}
	for _, cmd := range commandsOf(root) {
		name := cmd.FullName()
		h := helpOfCommand(cmd)
		least := 2
		if len(cmd.VisibleFlags()) == 1 { // --help alone
			least = 1
		}
		assert.GreaterOrEqual(t, len(h.examples), least, "%s: its help wants at least %d examples", name, least)
		assert.LessOrEqual(t, len(h.examples), 3, "%s: its help wants at most 3 examples", name)
		for _, ex := range h.examples {
			assert.Empty(t, exampleProblem(name, ex), "%s: %s", name, ex)
		}
	}
}

// The check above fails where it should.
func TestExampleCheckCatchesMistakes(t *testing.T) {
	for _, tc := range []struct {
		owner, ex string
		wrong     bool
	}{
		{"locum transform", `locum transform --file a.go --verify true "task"`, false},
		{"locum transform", `locum transform --file a.go --verfy true "task"`, true},
		{"locum runs prune", `locum runs purge --older-than 30d`, true},
		{"locum transform", `locum transform --file a.go --verify true --effort extreme "task"`, true},
		{"locum transform", `locum transform --file a.go --verify true --max-attempts three "task"`, true},
		{"locum transform", `git status`, true},
	} {
		got := exampleProblem(tc.owner, tc.ex)
		assert.Equal(t, tc.wrong, got != "", "%s: %q", tc.ex, got)
	}
}

func flagNamed(cmd *cli.Command, name string) cli.Flag {
	for _, f := range cmd.Flags {
		if f.Names()[0] == name {
			return f
		}
	}
	return nil
}

// The root help lists every command under one of its groups, each group once, in their order.
func TestRootGroupsEveryCommand(t *testing.T) {
	root := commandTree(t)
	for _, c := range visibleCommands(root) {
		assert.Contains(t, commandGroups, c.Category, "locum %s stands in no group of the root help", c.Name)
	}
	var groups []string
	for _, s := range groupedCommands(root) {
		groups = append(groups, s.group)
	}
	assert.Equal(t, commandGroups, groups)

	var out bytes.Buffer
	writeHelp(&out, pageOf(root))
	help := out.String()
	at := func(s string) int {
		i := strings.Index(help, s)
		require.GreaterOrEqual(t, i, 0, "the root help lacks %q", s)
		return i
	}
	assert.Less(t, at("DELEGATE:\n   transform"), at("REVIEW:\n   runs"))
	assert.Less(t, at("REVIEW:"), at("INSPECT:\n   status"))
	assert.Less(t, at("INSPECT:"), at("SET UP:\n   init"))
	assert.Contains(t, help, "\n   completion ")
}

// A setting's flag is known as the setting's wherever a command declares it, and a command's own
// flag that shares a setting's name is not taken for the setting.
func TestSettingFlagsAreKnown(t *testing.T) {
	for _, mode := range append([]string{""}, packs.Modes...) {
		for _, f := range settingFlags(mode) {
			spec, ok := settingOf(f)
			if assert.True(t, ok, "mode %q: --%s", mode, f.Names()[0]) {
				assert.Equal(t, f.Names()[0], spec.Name)
			}
		}
	}
	root := commandTree(t)
	_, ok := settingOf(flagNamed(root.Command("transform"), "model"))
	assert.False(t, ok, "transform's --model is its own, not dedup's embed_model")
	_, ok = settingOf(flagNamed(root.Command("eval"), "role"))
	assert.False(t, ok, "eval's --role is its own")
	spec, ok := settingOf(flagNamed(root.Command("dedup"), "model"))
	assert.True(t, ok)
	assert.Equal(t, "embed_model", spec.Key)
}

// Every flag of the tree stands among its command's own or in a group of settings; a flag's
// words say no default, which its row shows once; each default shown is the one a run gets.
func TestFlagsGroupedWithOneDefault(t *testing.T) {
	prose := regexp.MustCompile(`(?i)\(default\b|[;,:] default\b|by default|unless a pack`)
	for _, cmd := range allCommands(commandTree(t)) {
		for _, f := range cmd.Flags {
			cf, ok := f.(cli.CategorizableFlag)
			require.True(t, ok, "%s --%s", cmd.FullName(), f.Names()[0])
			if g := cf.GetCategory(); g != "" {
				assert.Contains(t, packs.Groups, packs.Group(g), "%s --%s", cmd.FullName(), f.Names()[0])
			}
			if df, ok := f.(cli.DocGenerationFlag); ok {
				assert.NotRegexp(t, prose, df.GetUsage(), "%s --%s: say its default in the value column", cmd.FullName(), f.Names()[0])
			}
		}
	}

	var out bytes.Buffer
	root := commandTree(t)
	writeHelp(&out, pageOf(root.Command("agent")))
	help := out.String()
	// The agent's input budget is its pack's, not the table's.
	assert.Regexp(t, `(?m)^   --max-input-bytes int +131072 +refuse a prompt`, help)
	assert.Regexp(t, `(?m)^   --role string +agent +run the model`, help)
	assert.Regexp(t, `(?m)^   --from string +HEAD +the commit`, help)
	assert.Equal(t, 1, strings.Count(help, defaultsNote[:40]))
	for _, title := range []string{"\nOPTIONS:\n", "\nMODEL REQUEST:\n", "\nVERIFY AND SANDBOX:\n", "\nENDPOINT:\n", "\nHOST COST:\n", "\nEXIT CODES:\n"} {
		assert.Contains(t, help, title)
	}
	assert.Less(t, strings.Index(help, "--verify string"), strings.Index(help, "MODEL REQUEST:"))
	assert.Less(t, strings.Index(help, "MODEL REQUEST:"), strings.Index(help, "--timeout duration"))

	// A page with no default a repository may change says nothing of one.
	out.Reset()
	writeHelp(&out, pageOf(root.Command("runs").Command("list")))
	assert.NotContains(t, out.String(), defaultsNote[:40])
}

// Each command's exit codes come from the one declaration: the shared words where it has none of
// its own, 1 only where it says what 1 means, and help exit-codes lists every command.
func TestExitCodesFromTheirDeclaration(t *testing.T) {
	assert.Equal(t, []exitLine{{0, "done"}, {2, "could not run"}}, exitWords{}.lines())
	assert.Equal(t, []exitLine{{0, "kept"}, {1, "red"}, {2, "could not run: no server"}}, exitWords{done: "kept", red: "red", couldNot: "no server"}.lines())

	root := commandTree(t)
	var out bytes.Buffer
	writeHelp(&out, pageOf(root.Command("transform")))
	assert.Contains(t, out.String(), "EXIT CODES:\n   0  the edit is kept\n   1  red after the last attempt, or refused before any request\n   2  "+exitCodes[exitCouldNot].words+"\n")

	out.Reset()
	writeExitCodes(&out, root)
	page := out.String()
	for _, m := range exitCodes {
		assert.Contains(t, page, m.words)
	}
	for _, c := range commandsOf(root) {
		assert.Contains(t, page, "\n"+c.FullName()+"\n")
	}
}

// The committed docs/reference is what `locum help reference` writes from the command tree.
func TestReferenceIsGenerated(t *testing.T) {
	want := referencePages(commandTree(t))
	dir := filepath.Join("..", "..", "docs", "reference")
	got, err := filepath.Glob(filepath.Join(dir, "*.md"))
	require.NoError(t, err)
	var names []string
	for _, path := range got {
		names = append(names, filepath.Base(path))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		if page, ok := want[filepath.Base(path)]; !ok {
			t.Errorf("docs/reference/%s is no page of the command tree: run `go generate ./...`", filepath.Base(path))
		} else if !bytes.Equal(data, page) {
			t.Errorf("docs/reference/%s is not what the command tree gives: run `go generate ./...`", filepath.Base(path))
		}
	}
	for name := range want {
		assert.True(t, slices.Contains(names, name), "docs/reference/%s is missing: run `go generate ./...`", name)
	}
}

// The generator writes every page and takes away a page no command has.
func TestWriteReference(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gone.md"), []byte("# gone\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("not a page\n"), 0o644))
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"locum", "help", "reference", dir}, strings.NewReader(""), &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.NoFileExists(t, filepath.Join(dir, "gone.md"))
	assert.FileExists(t, filepath.Join(dir, "keep.txt"))
	for name, data := range referencePages(commandTree(t)) {
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, string(data), string(got), name)
	}
}
