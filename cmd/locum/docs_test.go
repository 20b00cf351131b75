package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/mcp"
	"github.com/locumdev/locum/mcp/mcptest"
)

// userDocs are the documents written for users, relative to this package: the README and every
// page under docs/.
func userDocs(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, pages, "docs/*.md")
	return append([]string{"../../README.md"}, pages...)
}

// TestDocsNameRealCommandsAndFlags holds the README and docs/ to the command tree: every
// `locum COMMAND [SUBCOMMAND]` they show is a command, every --flag after it is one that command
// takes, and every --flag named on its own is a flag of some command. Flags of the other
// programs the documents show (go, git, llama-server, bwrap, a host's CLI) are listed in
// foreignFlags, each with its program, so a new one is a decision, not an oversight.
func TestDocsNameRealCommandsAndFlags(t *testing.T) {
	root := commandTree(t)
	for _, path := range userDocs(t) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		name := filepath.Base(path)
		for _, snippet := range codeOf(string(data)) {
			for _, problem := range checkSnippet(root, snippet) {
				t.Errorf("%s: %s", name, problem)
			}
		}
	}
}

// commandTree is locum's command tree as a run sees it: urfave/cli adds the completion command
// and the version flag when a command runs, so it runs one that prints and does nothing else.
func commandTree(t *testing.T) *cli.Command {
	t.Helper()
	root := (&env{stdout: io.Discard, stderr: io.Discard}).rootCommand()
	require.NoError(t, root.Run(context.Background(), []string{"locum", "version"}))
	return root
}

// foreignFlags are the flags the documents name of programs other than locum.
var foreignFlags = map[string]string{
	"jinja": "llama-server", "alias": "llama-server", "parallel": "llama-server", "ctx-size": "llama-server",
	"embeddings": "llama-server", "disable-userns": "bwrap",
	"dangerously-skip-permissions": "claude", "permission-mode": "claude",
}

// foreignCommand is the start of a command line, or of an inline snippet, run by a program
// other than locum: its flags are that program's.
var foreignCommand = regexp.MustCompile(`^\s*(\$ )?(go|git|npm|llama-server|python3?|claude|bwrap|curl|scripts/|source|stress|apt-get|dnf|pacman|lms|ollama|cp|find|LOCUM_[A-Z_]+=)`)

var (
	// invocation is locum and the words after it, up to a flag, an argument that is not a
	// lower-case word, or the end.
	invocation = regexp.MustCompile(`(?:^\s*(?:\$ )?(?:[A-Z_]+=\S* )*|[(/]|[|;&] )locum((?:[ \t]+[a-z][a-z0-9-]*)*)`)
	docFlag    = regexp.MustCompile(`(?:^|[\s\[(|=])--([a-z][a-z0-9_-]*)`)
	quoted     = regexp.MustCompile(`"[^"]*"|'[^']*'`)
)

// checkSnippet returns what in one command line or inline code span names no command or flag.
func checkSnippet(root *cli.Command, snippet string) []string {
	var problems []string
	line := quoted.ReplaceAllString(snippet, `""`)
	if i := strings.Index(line, " # "); i >= 0 {
		line = line[:i]
	}
	locs := invocation.FindAllStringSubmatchIndex(line, -1)
	if len(locs) == 0 {
		if foreignCommand.MatchString(line) {
			return nil
		}
		for _, m := range docFlag.FindAllStringSubmatch(line, -1) {
			if _, ok := foreignFlags[m[1]]; !ok && !anyTakes(root, m[1]) {
				problems = append(problems, "no command takes --"+m[1]+" (in `"+snippet+"`)")
			}
		}
		return problems
	}
	for i, loc := range locs {
		// A message's own prefix ("locum workflow: ...") starts output, not a command, and a
		// path (~/.config/locum/signing.key) names a folder.
		if after := line[loc[1]:]; after != "" && !strings.ContainsAny(after[:1], " \t") {
			continue
		}
		cmd := root
		for _, word := range strings.Fields(line[loc[2]:loc[3]]) {
			sub := cmd.Command(word)
			if sub == nil {
				// A command with subcommands takes one of them; any other takes arguments.
				if len(cmd.Commands) > 0 {
					problems = append(problems, cmd.FullName()+" has no command "+word+" (in `"+snippet+"`)")
				}
				break
			}
			cmd = sub
		}
		end := len(line)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		for _, sep := range []string{" | ", "; ", " && ", " || "} {
			if j := strings.Index(line[loc[1]:end], sep); j >= 0 {
				end = loc[1] + j
			}
		}
		for _, m := range docFlag.FindAllStringSubmatch(line[loc[1]:end], -1) {
			if !takesFlag(cmd, m[1]) && m[1] != "help" {
				problems = append(problems, cmd.FullName()+" takes no --"+m[1]+" (in `"+snippet+"`)")
			}
		}
	}
	return problems
}

// anyTakes reports whether cmd or any command under it takes the flag.
func anyTakes(cmd *cli.Command, name string) bool {
	if takesFlag(cmd, name) {
		return true
	}
	for _, sub := range cmd.Commands {
		if anyTakes(sub, name) {
			return true
		}
	}
	return false
}

var (
	fence      = regexp.MustCompile("(?ms)^```[a-z]*\n(.*?)^```")
	inlineCode = regexp.MustCompile("`([^`\n]+)`")
)

// codeOf returns the code of a Markdown document, one entry a logical line: each line of a fenced
// or indented block (a line ending in a backslash joined with the next), and each inline span.
func codeOf(doc string) []string {
	var out []string
	addBlock := func(block string) {
		block = strings.ReplaceAll(block, "\\\n", " ")
		for _, l := range strings.Split(block, "\n") {
			if strings.TrimSpace(l) != "" {
				out = append(out, l)
			}
		}
	}
	for _, m := range fence.FindAllStringSubmatch(doc, -1) {
		addBlock(m[1])
	}
	doc = fence.ReplaceAllString(doc, "")
	var block []string
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "    ") && (len(block) > 0 || !strings.HasPrefix(strings.TrimSpace(l), "- ")) {
			block = append(block, strings.TrimPrefix(l, "    "))
			continue
		}
		if len(block) > 0 {
			addBlock(strings.Join(block, "\n"))
			block = nil
		}
		for _, m := range inlineCode.FindAllStringSubmatch(l, -1) {
			out = append(out, m[1])
		}
	}
	addBlock(strings.Join(block, "\n"))
	return out
}

// TestDocsListTheServedTools holds docs/mcp.md's table of tools to what `locum mcp` serves: the
// same tools, each with the arguments of its input schema and no other.
func TestDocsListTheServedTools(t *testing.T) {
	data, err := os.ReadFile("../../docs/mcp.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|.*\\| (.*) \\|$")
	arg := regexp.MustCompile("`([a-z_]+)`")
	documented := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		for _, a := range arg.FindAllStringSubmatch(m[2], -1) {
			documented[m[1]] = append(documented[m[1]], a[1])
		}
	}

	session, ctx := mcptest.Connect(t, mcp.Options{Dir: t.TempDir(), Env: func(string) (string, bool) { return "", false }, Version: "test"}, nil)
	list, err := session.ListTools(ctx, nil)
	require.NoError(t, err)

	var served []string
	for _, tool := range list.Tools {
		served = append(served, tool.Name)
		args, ok := documented[tool.Name]
		if !assert.True(t, ok, "docs/mcp.md's table lacks the tool %s", tool.Name) {
			continue
		}
		schema, ok := tool.InputSchema.(map[string]any)
		require.True(t, ok, "%s: input schema %T", tool.Name, tool.InputSchema)
		props, _ := schema["properties"].(map[string]any)
		for _, a := range args {
			assert.Contains(t, props, a, "docs/mcp.md: the tool %s takes no argument %s", tool.Name, a)
		}
		for p := range props {
			assert.Contains(t, args, p, "docs/mcp.md: the table lacks the argument %s of the tool %s", p, tool.Name)
		}
	}
	for name := range documented {
		assert.True(t, slices.Contains(served, name), "docs/mcp.md lists %s, which locum mcp does not serve", name)
	}
	// `locum mcp --help` names the tools too.
	help := strings.Join(strings.Fields((&env{}).mcpCommand().Description), " ")
	for _, name := range served {
		assert.Contains(t, help, " "+name, "locum mcp --help does not name the tool %s", name)
	}
}

// TestDocsLinksResolve holds every relative link of the README and docs/ to a file that exists
// and, where it names an anchor in a Markdown file, to a heading of that file.
func TestDocsLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, path := range userDocs(t) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		prose := fence.ReplaceAllString(string(data), "")
		for _, m := range link.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			resolved := path
			if file != "" {
				resolved = filepath.Join(filepath.Dir(path), file)
			}
			if _, err := os.Stat(resolved); err != nil {
				t.Errorf("%s: the link %s leads nowhere", filepath.Base(path), target)
				continue
			}
			if anchor == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			page, err := os.ReadFile(resolved)
			require.NoError(t, err)
			assert.Contains(t, headingAnchors(string(page)), anchor, "%s: the link %s names no heading", filepath.Base(path), target)
		}
	}
}

// headingAnchors returns the anchors GitHub gives a Markdown file's headings: lower case, with
// every character but letters, digits, spaces, hyphens and underscores dropped, spaces as hyphens.
func headingAnchors(doc string) []string {
	var out []string
	for _, line := range strings.Split(fence.ReplaceAllString(doc, ""), "\n") {
		trimmed := strings.TrimLeft(line, "#")
		if trimmed == line || !strings.HasPrefix(trimmed, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(trimmed)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestCheckSnippet is the check on lines a document could hold, mistakes planted among them.
func TestCheckSnippet(t *testing.T) {
	root := commandTree(t)
	for _, tc := range []struct {
		snippet string
		wrong   []string // the start of each problem, in order
	}{
		{"locum status --json", nil},
		{"locum roles accept code qwen2.5-coder:7b --yes", nil},
		{"locum eval keygen --out ~/.config/locum/signing.key", nil},
		{`locum eval --ab --host-cmd "claude -p --output-format json" --write`, nil},
		{"source <(locum completion bash)", nil},
		{"go run ./cmd/locum transform --file PATH --lines A-B --model ID", nil},
		{"GODEBUG=inittrace=1 locum --version", nil},
		{"locum workflow: 1 of 8 items did not end green; --bogus", nil},
		{"go test -race ./... --anything", nil},
		{"--max-attempts", nil},
		{"llama-server -m M.gguf --jinja", nil},
		{"--jinja", nil},
		{"locum status --verbose", []string{"locum status takes no --verbose"}},
		{"locum frobnicate", []string{"locum has no command frobnicate"}},
		{"locum runs purge", []string{"locum runs has no command purge"}},
		{"locum transform --file F # --not-checked, a comment", nil},
		{"locum runs show ID --diff | locum ledger --diff", []string{"locum ledger takes no --diff"}},
		{"--no-such-flag", []string{"no command takes --no-such-flag"}},
	} {
		t.Run(tc.snippet, func(t *testing.T) {
			got := checkSnippet(root, tc.snippet)
			require.Len(t, got, len(tc.wrong), "%q", got)
			for i, w := range tc.wrong {
				assert.True(t, strings.HasPrefix(got[i], w), "%q does not start with %q", got[i], w)
			}
		})
	}
}
