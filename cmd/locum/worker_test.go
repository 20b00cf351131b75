package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/mcp"
	"github.com/locumdev/locum/mcp/mcptest"
	"github.com/locumdev/locum/packs"
)

// TestTheWorkersToolsAreLocumsTools holds the worker init installs to the server the host starts
// from .mcp.json: its tools are exactly the tools that server lists, as Claude Code names a
// server's tools (mcp__locum__NAME), and nothing else.
func TestTheWorkersToolsAreLocumsTools(t *testing.T) {
	root := t.TempDir()
	gittest.Init(t, root)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("LOCUM_BASE_URL", "http://127.0.0.1:9/v1")
	t.Chdir(root)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"locum", "init"}, strings.NewReader(""), &stdout, &stderr), stderr.String())
	data, err := os.ReadFile(filepath.Join(root, packs.WorkerInstallPath))
	require.NoError(t, err)
	var given []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if list, ok := strings.CutPrefix(line, "tools: "); ok {
			given = strings.Split(list, ", ")
		}
	}
	require.NotEmpty(t, given)

	session, ctx := mcptest.Connect(t, mcp.Options{Dir: root, Env: os.LookupEnv, Version: "test"}, nil)
	list, err := session.ListTools(ctx, nil)
	require.NoError(t, err)
	var served []string
	for _, tool := range list.Tools {
		served = append(served, "mcp__locum__"+tool.Name)
	}
	assert.ElementsMatch(t, served, given)
}

// TestThePluginWorkersToolsAreLocumsTools holds the worker of the plugin init --plugin writes to
// the server that plugin starts: its tools are exactly the tools that server lists, as Claude Code
// names a plugin server's tools (mcp__plugin_locum_locum__NAME), and nothing else.
func TestThePluginWorkersToolsAreLocumsTools(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("LOCUM_BASE_URL", "http://127.0.0.1:9/v1")
	t.Chdir(root)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"locum", "init", "--plugin", "plugin"}, strings.NewReader(""), &stdout, &stderr), stderr.String())
	data, err := os.ReadFile(filepath.Join(root, "plugin", packs.PluginWorkerPath))
	require.NoError(t, err)
	var given []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if list, ok := strings.CutPrefix(line, "tools: "); ok {
			given = strings.Split(list, ", ")
		}
	}
	require.NotEmpty(t, given)

	project := t.TempDir()
	gittest.Init(t, project)
	session, ctx := mcptest.Connect(t, mcp.Options{Dir: project, Env: os.LookupEnv, Version: "test"}, nil)
	list, err := session.ListTools(ctx, nil)
	require.NoError(t, err)
	var served []string
	for _, tool := range list.Tools {
		served = append(served, "mcp__plugin_locum_locum__"+tool.Name)
	}
	assert.ElementsMatch(t, served, given)
}
