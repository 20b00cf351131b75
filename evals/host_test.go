package evals

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "host.sh")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/bash\n"+body+"\n"), 0o755))
	return p
}

func TestParseHostCommandRefusesBypass(t *testing.T) {
	for _, c := range []string{
		"claude --dangerously-skip-permissions -p",
		"claude --dangerously-skip-permissions=true -p",
		"claude -dangerously-skip-permissions -p",
		"claude --DANGEROUSLY-SKIP-PERMISSIONS -p",
		"claude --allow-dangerously-skip-permissions -p",
		"claude --allow-dangerously-skip-permissions=1 -p",
		"env A=1 claude -p --permission-mode bypassPermissions",
		"claude --permission-mode bypassPermissions",
		"claude --permission-mode=bypassPermissions",
		"claude --permission-mode=bypasspermissions",
		"claude -permission-mode bypassPermissions",
	} {
		_, err := ParseHostCommand(c)
		var d *DangerousHostError
		assert.True(t, errors.As(err, &d), c)
	}
	h, err := ParseHostCommand("claude  -p   --permission-mode plan")
	require.NoError(t, err)
	assert.Equal(t, []string{"claude", "-p", "--permission-mode", "plan"}, h.Argv)
	for _, c := range []string{"claude -p bypassPermissions", "claude -p dangerously-skip-permissions", "claude --permission-mode=plan -p"} {
		_, err := ParseHostCommand(c)
		assert.NoError(t, err, "%s: only a flag turns the checks off", c)
	}
	_, err = ParseHostCommand("   ")
	assert.Error(t, err)
}

func TestHostTurn(t *testing.T) {
	h := HostCommand{Argv: []string{script(t, `pwd > /dev/null; [ -z "$(ls -A)" ] || exit 9; echo "answer to: ${@: -1}"`), "-p"}}
	turn, err := h.Turn(context.Background(), "the prompt", time.Minute)
	require.NoError(t, err)
	assert.True(t, turn.Completed, turn.Detail)
	assert.Equal(t, "answer to: the prompt\n", turn.Output, "the prompt is the last argument, and the directory starts empty")

	fails := HostCommand{Argv: []string{script(t, "echo nope >&2; exit 3")}}
	turn, err = fails.Turn(context.Background(), "p", time.Minute)
	require.NoError(t, err)
	assert.False(t, turn.Completed)
	assert.Equal(t, 3, *turn.Exit)
	assert.Contains(t, turn.Detail, "nope")

	slow := HostCommand{Argv: []string{script(t, "sleep 30")}}
	turn, err = slow.Turn(context.Background(), "p", 200*time.Millisecond)
	require.NoError(t, err)
	assert.False(t, turn.Completed)
	assert.Nil(t, turn.Exit)
}

func TestHostOutputOverTheLimitStopsTheCapture(t *testing.T) {
	h := HostCommand{Argv: []string{script(t, "head -c 17000000 /dev/zero; sleep 30")}}
	_, err := h.Turn(context.Background(), "p", time.Minute)
	assert.ErrorIs(t, err, ErrHostTooLarge)
}
