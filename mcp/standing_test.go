package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/cost"
)

// The standing cost's budgets: what a host re-reads on every turn of every session for having
// locum installed, delegating or not.
//
// toolsBudget is for the tools/list result. The ten tools' names, annotations and 93 arguments
// with their types took 5.1 KB with no description at all; the descriptions, a few sentences a
// tool (when to call it, what comes back) and a few words for the arguments whose name does not
// say their form, 4.7 KB: 9,793 bytes, a third of the 29.8 KB the list took when it carried the
// manual and four copies of the result schema. The handoff tool adds 1,083 bytes: a description
// of one sentence, 149 bytes, and its arguments: its own three, the model, and the ten settings a
// call of a chat mode may narrow, as summarize's. That is 10,876 bytes, held to 10,950, about
// 2,720 tokens.
// The agent tool, with its turn caps, is 1.6 KB of it, symbols 0.35 KB: a tool more means fewer
// words elsewhere.
//
// instructionsBudget is for the instructions with no ledger: about 300 bytes of rails and the
// rule for reading a result, and the break-even sentence with the four modes' prior lines
// (about 450 bytes); 1,200 leaves room for a mode more or longer break-even words.
const (
	toolsBudget        = 10950
	instructionsBudget = 1200
)

// hostView is what a host receives from locum mcp before its first call, byte for byte as the
// stdio transport writes it: the tools/list result, and the instructions of the initialize
// result as the host decodes them. The repository is fresh (no ledger) and the environment
// empty, so the instructions carry the break-even's documented priors.
func hostView(t *testing.T) (tools []byte, instructions string) {
	t.Helper()
	root := t.TempDir()
	gittest.Init(t, root)
	env := map[string]string{"HOME": t.TempDir()}
	s, err := New(Options{Dir: root, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Version: "test"})
	require.NoError(t, err)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, Stdio(ctx, inR, outW)) }()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		<-done
	})
	out := bufio.NewReaderSize(outR, 1<<20)
	// answer sends one request and reads the line that answers it: the server writes nothing
	// else before it (no logging capability, no notification unasked).
	answer := func(request string) json.RawMessage {
		_, err := fmt.Fprintln(inW, request)
		require.NoError(t, err)
		line, err := out.ReadBytes('\n')
		require.NoError(t, err)
		var msg struct {
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal(line, &msg), "%s", line)
		require.NotEmpty(t, msg.Result, "%s", line)
		return msg.Result
	}
	greeting := answer(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`)
	var initialized struct {
		Instructions string `json:"instructions"`
	}
	require.NoError(t, json.Unmarshal(greeting, &initialized))
	_, err = fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(t, err)
	tools = answer(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	return tools, initialized.Instructions
}

func TestStandingCostWithinBudget(t *testing.T) {
	tools, instructions := hostView(t)
	assert.LessOrEqual(t, len(tools), toolsBudget, "the tools/list result is %d bytes, over its budget of %d: say less in a description, or nothing where the argument's name says it", len(tools), toolsBudget)
	assert.LessOrEqual(t, len(instructions), instructionsBudget, "the instructions are %d bytes, over their budget of %d:\n%s", len(instructions), instructionsBudget, instructions)
	assert.Contains(t, instructions, "pays from", "the instructions carry the break-even")
}

// The ledger charges cost.StandingBytes for every host turn; it must be what a host receives.
func TestStandingBytesIsMeasured(t *testing.T) {
	tools, instructions := hostView(t)
	measured := len(tools) + len(instructions)
	assert.Equal(t, measured, cost.StandingBytes, "cost.StandingBytes must be the measured standing cost: set it to %d (tools/list %d bytes, instructions %d)", measured, len(tools), len(instructions))
}
