package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/mcp"
	"github.com/locumdev/locum/mcp/mcptest"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scripted"
)

// The same request refused on the command line and over MCP is refused alike: the same status,
// kind and exit code, and the same reason once each front end's names for a setting (--max-
// input-bytes, `max_input_bytes`) are read as one. The queries (status, ledger, runs show and
// their tools) are held to the same.
func TestFrontEndsRefuseAlike(t *testing.T) {
	llm := scripted.New()
	t.Cleanup(llm.Close)
	require.NoError(t, llm.Mimic("lmstudio"))
	root := t.TempDir()
	gittest.Init(t, root)
	require.NoError(t, os.WriteFile(filepath.Join(root, "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, "notes"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes", "a.md"), []byte("one note\n"), 0o644))
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("LOCUM_BASE_URL", llm.BaseURL())
	t.Chdir(root)

	session, _ := mcptest.Connect(t, mcp.Options{Dir: root, Env: os.LookupEnv, AllowModel: true, Version: "test"}, nil)

	edit := map[string]any{"file": "calc.go", "verify": "true", "task": "make Add add", "model": "m"}
	with := func(base map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(out, kv[i].(string))
				continue
			}
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	editCLI := []string{"transform", "--file", "calc.go", "--verify", "true", "--model", "m"}
	for _, tc := range []struct {
		name string
		cli  []string
		tool string
		args map[string]any
		kind string
	}{
		{"a role with no routing", []string{"transform", "--file", "calc.go", "--verify", "true", "--role", "code", "make Add add"},
			"transform", with(edit, "model", nil, "role", "code"), "refused"},
		{"a task over the budget", append(editCLI, "--max-input-bytes", "10", "make Add add"),
			"transform", with(edit, "max_input_bytes", 10), "input_budget"},
		{"a span over the budget", append(editCLI, "--max-input-bytes", "20", "make Add add"),
			"transform", with(edit, "max_input_bytes", 20), "input_budget"},
		{"an endpoint off loopback", append(editCLI, "--base-url", "http://192.0.2.1:1234/v1", "make Add add"),
			"transform", with(edit, "base_url", "http://192.0.2.1:1234/v1"), "off_loopback"},
		{"a setting that does not parse", append(editCLI, "--effort", "huge", "make Add add"),
			"transform", with(edit, "effort", "huge"), "bad_input"},
		{"a file outside the repository", []string{"transform", "--file", "../x.go", "--verify", "true", "--model", "m", "make Add add"},
			"transform", with(edit, "file", "../x.go"), "bad_input"},
		{"lines and symbol both", append(editCLI, "--lines", "1-2", "--symbol", "Add", "make Add add"),
			"transform", with(edit, "lines", "1-2", "symbol", "Add"), "bad_input"},
		{"an agent for a role with no routing", []string{"agent", "--verify", "true", "--role", "agent", "make Add add"},
			"agent", map[string]any{"task": "make Add add", "verify": "true", "role": "agent"}, "refused"},
		{"an agent with an empty verify", []string{"agent", "--verify", "", "--model", "m", "make Add add"},
			"agent", map[string]any{"task": "make Add add", "verify": "", "model": "m"}, "bad_input"},
		{"an agent from no commit", []string{"agent", "--verify", "true", "--from", "no-such-ref", "--model", "m", "make Add add"},
			"agent", map[string]any{"task": "make Add add", "verify": "true", "from": "no-such-ref", "model": "m"}, "bad_input"},
		{"an agent with turns out of bounds", []string{"agent", "--verify", "true", "--max-turns", "500", "--model", "m", "make Add add"},
			"agent", map[string]any{"task": "make Add add", "verify": "true", "max_turns": 500, "model": "m"}, "bad_input"},
		{"summarize lines out of bounds", []string{"summarize", "--file", "calc.go", "--lines", "90-99", "--model", "m"},
			"summarize", map[string]any{"file": "calc.go", "lines": "90-99", "model": "m"}, "bad_input"},
		{"dedup with one entry", []string{"dedup", "--dir", "notes", "--method", "lexical"},
			"dedup", map[string]any{"dir": "notes", "method": "lexical"}, "bad_input"},
		{"dedup with a threshold out of range", []string{"dedup", "--dir", "notes", "--threshold", "1.5"},
			"dedup", map[string]any{"dir": "notes", "threshold": 1.5}, "bad_input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append(append([]string{"locum"}, tc.cli...), "--json"), strings.NewReader(""), &stdout, &stderr)
			var fromCLI map[string]any
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &fromCLI), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())

			res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			require.NoError(t, err)
			require.True(t, res.IsError)
			data, err := json.Marshal(res.StructuredContent)
			require.NoError(t, err)
			var fromMCP map[string]any
			require.NoError(t, json.Unmarshal(data, &fromMCP), "the refusal carries its result object")

			cliErr, _ := fromCLI["error"].(map[string]any)
			mcpErr, _ := fromMCP["error"].(map[string]any)
			require.NotNil(t, cliErr)
			require.NotNil(t, mcpErr)
			assert.Equal(t, tc.kind, cliErr["kind"], "%v", cliErr["message"])
			assert.Equal(t, cliErr["kind"], mcpErr["kind"])
			assert.Equal(t, fromCLI["status"], fromMCP["status"])
			assert.Equal(t, fromCLI["exit_code"], fromMCP["exit_code"])
			assert.Equal(t, float64(code), fromCLI["exit_code"])
			assert.Equal(t, settingWords(cliErr["message"].(string)), settingWords(mcpErr["message"].(string)))
			assert.NotContains(t, mcpErr["message"], "--", "an MCP message names tool arguments, never a CLI flag")
		})
	}

	// The queries are refused alike too. Where the answer is a status report, its error is the
	// same; elsewhere each front end words the same reason after its own start: `locum CMD: ` on
	// stderr (none for a workspace that cannot be read, whose message names its file) and
	// `ERROR: ` in the tool's text, which may say more before the reason.
	breakWorkspace := func(t *testing.T) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, ".locum"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, ".locum", "workspace.json"), []byte("{not json"), 0o644))
		t.Cleanup(func() { require.NoError(t, os.RemoveAll(filepath.Join(root, ".locum"))) })
	}
	for _, tc := range []struct {
		name    string
		cli     []string
		command string
		tool    string
		args    map[string]any
		setup   func(*testing.T)
		// report says the answer is a status report with an error of this kind; code is the
		// command line's exit code.
		report string
		code   int
	}{
		{name: "status of an endpoint off loopback", cli: []string{"status", "--base-url", "http://192.0.2.1:1234/v1", "--json"}, command: "locum status",
			tool: "status", args: map[string]any{"base_url": "http://192.0.2.1:1234/v1"}, report: "off_loopback", code: 1},
		{name: "status of an endpoint that is no URL", cli: []string{"status", "--base-url", "not a url", "--json"}, command: "locum status",
			tool: "status", args: map[string]any{"base_url": "not a url"}, report: "off_loopback", code: 1},
		{name: "status with a workspace that cannot be read", cli: []string{"status"}, command: "locum status",
			tool: "status", args: map[string]any{}, setup: breakWorkspace, code: 2},
		{name: "the ledger since a time that does not parse", cli: []string{"ledger", "--since", "soon"}, command: "locum ledger",
			tool: "ledger", args: map[string]any{"since": "soon"}, code: 2},
		{name: "the ledger with a workspace that cannot be read", cli: []string{"ledger"}, command: "locum ledger",
			tool: "ledger", args: map[string]any{}, setup: breakWorkspace, code: 2},
		{name: "the journal of no run", cli: []string{"runs", "show", "nosuch"}, command: "locum runs show",
			tool: "runs_show", args: map[string]any{"run_id": "nosuch"}, code: 2},
	} {
		t.Run("query: "+tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(t)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"locum"}, tc.cli...), strings.NewReader(""), &stdout, &stderr)
			assert.Equal(t, tc.code, code, "stderr: %s", stderr.String())

			res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			require.NoError(t, err)
			require.True(t, res.IsError)
			require.NotEmpty(t, res.Content)
			text := res.Content[0].(*sdk.TextContent).Text

			if tc.report != "" {
				var fromCLI, fromMCP engine.StatusReport
				require.NoError(t, json.Unmarshal(stdout.Bytes(), &fromCLI), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
				data, err := json.Marshal(res.StructuredContent)
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(data, &fromMCP), "the refusal carries its report")
				require.NotNil(t, fromCLI.Error)
				require.NotNil(t, fromMCP.Error)
				assert.Equal(t, tc.report, fromCLI.Error.Kind, fromCLI.Error.Message)
				assert.Equal(t, fromCLI.Error.Kind, fromMCP.Error.Kind)
				assert.False(t, fromCLI.Up)
				assert.False(t, fromMCP.Up)
				assert.Equal(t, fromCLI.Endpoint, fromMCP.Endpoint)
				assert.Equal(t, settingWords(fromCLI.Error.Message), settingWords(fromMCP.Error.Message))
				assert.NotContains(t, fromMCP.Error.Message, "--", "an MCP message names tool arguments, never a CLI flag")
				return
			}
			assert.Nil(t, res.StructuredContent, "a query refused before it ran has no object")
			line, _, _ := strings.Cut(stderr.String(), "\n")
			fromCLI := settingWords(strings.TrimPrefix(line, tc.command+": "))
			fromMCP := settingWords(leadArg.ReplaceAllString(strings.TrimPrefix(text, "ERROR: "), "SETTING($1):"))
			assert.True(t, strings.HasSuffix(fromMCP, fromCLI), "the command line says %q\nthe tool says %q", fromCLI, fromMCP)
			assert.NotContains(t, text, "--", "an MCP message names tool arguments, never a CLI flag")
		})
	}
}

var (
	flagName = regexp.MustCompile("--([a-z][a-z-]*)")
	argName  = regexp.MustCompile("`([a-z][a-z_]*)`")
	// A value's source names the flag or the argument it came from.
	flagSource = regexp.MustCompile(`flag SETTING\(([a-z_]+)\)`)
	argSource  = regexp.MustCompile(`argument ([a-z_]+)`)
	// A tool's message may start with the argument it is about, bare, where the command line's
	// names the flag.
	leadArg = regexp.MustCompile(`^([a-z][a-z_]*):`)
)

// settingWords reads a message with each setting named as a flag (--max-input-bytes) or as a
// tool argument (`max_input_bytes`) named one way, SETTING(max_input_bytes), and a value's
// source (flag --effort, argument effort) as SOURCE(effort).
func settingWords(msg string) string {
	msg = flagName.ReplaceAllStringFunc(msg, func(m string) string {
		return "SETTING(" + strings.ReplaceAll(strings.TrimPrefix(m, "--"), "-", "_") + ")"
	})
	msg = argName.ReplaceAllStringFunc(msg, func(m string) string {
		return "SETTING(" + strings.Trim(m, "`") + ")"
	})
	msg = flagSource.ReplaceAllString(msg, "SOURCE($1)")
	msg = argSource.ReplaceAllString(msg, "SOURCE($1)")
	// The endpoint rail is the operator's: the CLI names its flag, MCP the option of locum mcp.
	msg = strings.ReplaceAll(msg, "the operator's allow-remote option of locum mcp", "SETTING(allow_remote)")
	return msg
}
