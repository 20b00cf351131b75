package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/ledger"
)

// TestSkillMatchesCLI checks the delegate-local skill against the CLI it teaches: every command
// it shows exists, and every flag it names is one that command takes.
func TestSkillMatchesCLI(t *testing.T) {
	data, err := os.ReadFile("../../packs/tools/local-llm/skills/delegate-local/SKILL.md")
	require.NoError(t, err)
	root := (&env{}).rootCommand()

	var commands []string
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "    locum "); ok {
			commands = append(commands, rest)
		}
	}
	require.NotEmpty(t, commands)
	require.True(t, strings.HasPrefix(commands[0], "status"), "the skill starts with locum status")

	flag := regexp.MustCompile(`(?:^|\s)--([a-z][a-z0-9-]*)`)
	for _, c := range commands {
		name := strings.Fields(c)[0]
		cmd := root.Command(name)
		require.NotNil(t, cmd, "locum %s", name)
		for _, m := range flag.FindAllStringSubmatch(c, -1) {
			assert.True(t, takesFlag(cmd, m[1]), "locum %s takes no --%s", name, m[1])
		}
	}
	// Flags named in the prose, with the command they belong to.
	for _, fc := range []struct{ cmd, flag string }{
		{"transform", "lines"}, {"transform", "symbol"}, {"transform", "max-input-bytes"}, {"transform", "role"},
		{"transform", "model"}, {"transform", "json"}, {"summarize", "json"}, {"status", "base-url"}, {"status", "allow-remote"},
	} {
		require.Contains(t, string(data), "--"+fc.flag)
		assert.True(t, takesFlag(root.Command(fc.cmd), fc.flag), "locum %s takes no --%s", fc.cmd, fc.flag)
	}
}

func takesFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// TestSkillBreakEvenRule checks the skill's break-even rule against the code that enforces it: the
// line it quotes is the one locum status prints with no history (the documented prior), and the
// refusal and the operator's way around it are the ones it names. ledger.txtar runs the rule: a
// small span refused when the ledger says the role loses, a span from the break-even delegated.
func TestSkillBreakEvenRule(t *testing.T) {
	data, err := os.ReadFile("../../packs/tools/local-llm/skills/delegate-local/SKILL.md")
	require.NoError(t, err)
	skill := string(data)
	var prior string
	for _, r := range ledger.BreakEven(nil, cost.Defaults()) {
		if r.Mode == "transform" {
			r.Role = "code"
			prior = r.Words()
		}
	}
	require.NotEmpty(t, prior)
	assert.Contains(t, skill, "    break-even  "+prior+"\n", "the skill quotes the prior's line as status prints it")
	assert.Contains(t, skill, "Delegate a `transform` only above the line's keep rate, and from its span size where it names one")
	assert.Contains(t, skill, `"kind":"does_not_pay"`)
	assert.True(t, takesFlag((&env{}).rootCommand().Command("transform"), "delegate-when"))
	assert.Contains(t, skill, "--delegate-when always")
}
