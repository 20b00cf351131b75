package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/scripted"
)

// toolCall is a scripted reply that makes one native tool call.
func toolCall(name, args string) scripted.Reply {
	return scripted.Reply{Calls: []scripted.Call{{Name: name, Arguments: json.RawMessage(args)}}}
}

// agentBranches are the agent branches of the fixture's repository.
func (f *fixture) agentBranches(t *testing.T) string {
	return strings.TrimSpace(gittest.Git(t, f.root, "branch", "--list", "locum/agent/*"))
}

// The agent tool runs a multi-file task as locum agent does: in a worktree of its own, the work
// committed on its branch and the person's tree untouched, with a progress notification for each
// turn and each verify, and the result object of the command's --json.
func TestAgentToolCommitsItsWorkOnABranch(t *testing.T) {
	f := newFixture(t, true)
	gittest.CommitAll(t, f.root)
	f.llm.On("POST", "/v1/chat/completions",
		toolCall("read_file", `{"path":"calc.go"}`),
		toolCall("edit_file", `{"path":"calc.go","search":"return a - b","replace":"return a + b"}`),
		toolCall("finish", `{"summary":"Add adds"}`))
	res, err := f.call(t, context.Background(), "agent", map[string]any{
		"task": "make Add add", "verify": `grep -q "return a + b" calc.go`, "model": "qwen3-coder-30b",
	}, "tok-agent")
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	out := structured(t, res)
	assert.Equal(t, "OK", out["status"])
	assert.Equal(t, "agent", out["mode"])
	id := out["run_id"].(string)
	details := out["details"].(map[string]any)
	assert.Equal(t, "completed", details["status"])
	assert.Equal(t, "locum/agent/"+id, details["branch"])
	assert.Equal(t, []any{"calc.go"}, details["files_changed"])
	assert.EqualValues(t, 3, details["turns"])
	assert.Regexp(t, `^OK: agent: completed after 3 turns on branch locum/agent/`+id+`: 1 file changed, 1 insertion\(\+\), 1 deletion\(-\); fixed: the verify failed before the run; saved=\S+ run=`+id+`$`, text(res))

	assert.Equal(t, calc, f.file(t), "the person's tree is untouched")
	assert.Equal(t, details["commit"], strings.TrimSpace(gittest.Git(t, f.root, "rev-parse", "locum/agent/"+id)))
	assert.Contains(t, gittest.Git(t, f.root, "show", "locum/agent/"+id+":calc.go"), "return a + b")

	got := f.waitProgress(t, "verify running (round 1 of 3, after finish)")
	for _, want := range []string{"verify running (baseline, before any edit)", "turn 1 of 30: read_file calc.go",
		"turn 2 of 30: edit_file calc.go", "turn 3 of 30: finish"} {
		assert.Contains(t, got, want)
	}

	// runs_show reads the run's journal and its branch's diff from where it started.
	show, err := f.call(t, context.Background(), "runs_show", map[string]any{"run_id": id}, nil)
	require.NoError(t, err)
	require.False(t, show.IsError, text(show))
	shown := structured(t, show)
	diff := shown["diff"].(map[string]any)
	assert.Equal(t, "locum/agent/"+id, diff["branch"])
	assert.Contains(t, diff["text"], "-\treturn a - b\n+\treturn a + b\n")
	assert.EqualValues(t, len(diff["text"].(string)), diff["bytes"])
	assert.Contains(t, text(show), fmt.Sprintf("\ndiff of branch locum/agent/%s from where it started, %d bytes:\ndiff --git a/calc.go b/calc.go\n", id, len(diff["text"].(string))))
	assert.Contains(t, text(show), "\n+\treturn a + b")

	list, err := f.client.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tool := range list.Tools {
		if tool.Name == "agent" {
			assert.Equal(t, &sdk.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}, tool.Annotations,
				"it writes only a branch of its own: neither read-only nor destructive")
			assert.ElementsMatch(t, []any{"task", "verify"}, tool.InputSchema.(map[string]any)["required"])
		}
	}
}

// An agent call is refused as the command is, before any request and with no branch made; a
// call may lower a rail, never raise it, and its messages name its arguments, never a flag.
func TestAgentToolRefusals(t *testing.T) {
	for _, tc := range []struct {
		name       string
		allowModel bool
		args       map[string]any
		status     string
		want       string
	}{
		{"a model the operator did not allow", false, map[string]any{"model": "qwen3-coder-30b"}, "REFUSED", "REFUSED: this server runs the model a role is routed to"},
		{"a role with no earned routing", true, map[string]any{"role": "agent"}, "REFUSED", `REFUSED: role "agent" has no earned routing`},
		{"a task over the budget", true, map[string]any{"model": "qwen3-coder-30b", "max_input_bytes": 10}, "REFUSED", "the task is 12 bytes, over the input budget of 10 bytes (`max_input_bytes`); shorten the task"},
		{"turns the call would raise", true, map[string]any{"model": "qwen3-coder-30b", "max_turns": 100}, "ERROR", `argument max_turns: "100" is not at most 30, this run's (pack tools/local-llm): a tool call may lower it, never raise it`},
		{"fix rounds the call would raise", true, map[string]any{"model": "qwen3-coder-30b", "verify_rounds": 5}, "ERROR", "a tool call may lower it, never raise it"},
		{"an endpoint off loopback", true, map[string]any{"model": "qwen3-coder-30b", "base_url": "http://192.0.2.1:1234/v1"}, "REFUSED", "locum agent: refusing endpoint \"http://192.0.2.1:1234/v1\""},
		{"an empty verify", true, map[string]any{"model": "qwen3-coder-30b", "verify": ""}, "ERROR", "locum agent: `verify` is empty"},
		{"a from that names no commit", true, map[string]any{"model": "qwen3-coder-30b", "from": "no-such-ref"}, "ERROR", "`from` no-such-ref names no commit of this repository"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.allowModel)
			gittest.CommitAll(t, f.root)
			f.llm.On("POST", "/v1/chat/completions", toolCall("finish", `{"summary":"done"}`))
			args := map[string]any{"task": "make Add add", "verify": "true"}
			for k, v := range tc.args {
				args[k] = v
			}
			res, err := f.call(t, context.Background(), "agent", args, nil)
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, text(res), tc.want)
			obj := structured(t, res)
			assert.Equal(t, "agent", obj["mode"])
			assert.Equal(t, tc.status, obj["status"])
			assert.True(t, strings.HasPrefix(text(res), tc.status+": "), "the text says what the result object does: %s", text(res))
			if tc.args["role"] != nil {
				assert.Equal(t, "locum roles accept agent MODEL", obj["error"].(map[string]any)["command"])
			}
			assert.NotContains(t, text(res), "--", "an MCP message names tool arguments and commands, never a CLI flag")
			assert.Empty(t, f.llm.RequestsTo("/v1/chat/completions"), "refused before any request")
			assert.Empty(t, f.agentBranches(t), "no branch")
			assert.Equal(t, calc, f.file(t))
		})
	}
}

// runs_show puts a bounded part of a large branch's diff in the host's context, and says where the
// rest is; of a run that left no branch, it says so.
func TestRunsShowBoundsAnAgentsDiff(t *testing.T) {
	f := newFixture(t, true)
	gittest.CommitAll(t, f.root)
	// The operator's budget takes a write of 40,000 bytes; a call could not raise it.
	f.env["LOCUM_MAX_INPUT_BYTES"] = "200000"
	big, err := json.Marshal(map[string]string{"path": "big.txt", "content": strings.Repeat("x\n", 20000)})
	require.NoError(t, err)
	f.llm.On("POST", "/v1/chat/completions", toolCall("write_file", string(big)), toolCall("finish", `{"summary":"wrote it"}`))
	res, err := f.call(t, context.Background(), "agent", map[string]any{"task": "write big.txt", "verify": "test -s big.txt", "model": "qwen3-coder-30b"}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	id := structured(t, res)["run_id"].(string)

	show, err := f.call(t, context.Background(), "runs_show", map[string]any{"run_id": id}, nil)
	require.NoError(t, err)
	require.False(t, show.IsError, text(show))
	diff := structured(t, show)["diff"].(map[string]any)
	shown, size := diff["text"].(string), int64(diff["bytes"].(float64))
	assert.Greater(t, size, int64(40000))
	assert.LessOrEqual(t, len(shown), diffBytes)
	assert.True(t, strings.HasSuffix(shown, "+x\n"), "cut at a line's end")
	assert.Contains(t, text(show), fmt.Sprintf("its first %d of %d bytes (the person reads the rest with locum runs show %s --diff):", len(shown), size, id))
	assert.Less(t, len(text(show)), 2*diffBytes, "the text holds the diff once, and no more of it")

	// A red run leaves no branch: runs_show says so, and shows the journal still.
	f.llm.On("POST", "/v1/chat/completions", toolCall("finish", `{"summary":"nothing"}`))
	res, err = f.call(t, context.Background(), "agent", map[string]any{"task": "make Add add", "verify": "exit 1", "model": "qwen3-coder-30b", "verify_rounds": 0}, nil)
	require.NoError(t, err)
	require.True(t, res.IsError, text(res))
	id = structured(t, res)["run_id"].(string)
	show, err = f.call(t, context.Background(), "runs_show", map[string]any{"run_id": id}, nil)
	require.NoError(t, err)
	require.False(t, show.IsError, text(show))
	assert.Contains(t, text(show), "no diff: run "+id+" has no branch locum/agent/"+id)
	assert.NotContains(t, structured(t, show), "diff")
	assert.Contains(t, text(show), "run_end")
}
