package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scripted"
)

func TestProgressTellsAStageAtMostOnceASecond(t *testing.T) {
	decode := func(tokens int) engine.ProgressEvent {
		return engine.ProgressEvent{Stage: engine.StageDecode, Attempt: 1, Deltas: tokens, Chars: 4 * tokens}
	}
	tests := []struct {
		name string
		// events arrive every step apart.
		step   time.Duration
		events []engine.ProgressEvent
		want   []string
	}{
		{
			name: "a token every 10ms: the first, then one a second", step: 10 * time.Millisecond,
			events: func() []engine.ProgressEvent {
				evs := []engine.ProgressEvent{{Stage: engine.StagePrefill, Attempt: 1}}
				for i := 1; i <= 250; i++ {
					evs = append(evs, decode(i))
				}
				return append(evs, engine.ProgressEvent{Stage: engine.StageVerify, Attempt: 1})
			}(),
			want: []string{"prefill", "decode: 1 tokens", "decode: 101 tokens", "decode: 201 tokens", "verify running"},
		},
		{
			name: "a new stage is told at once", step: time.Millisecond,
			events: []engine.ProgressEvent{
				{Stage: engine.StagePrefill, Attempt: 1}, decode(1), {Stage: engine.StageVerify, Attempt: 1},
				{Stage: engine.StagePrefill, Attempt: 2}, decode(1), {Stage: engine.StageVerify, Attempt: 2},
			},
			want: []string{"prefill", "decode: 1 tokens", "verify running (attempt 1)", "prefill", "decode: 1 tokens", "verify running (attempt 2)"},
		},
		{
			name: "an agent's next turn is told at once", step: time.Millisecond,
			events: []engine.ProgressEvent{
				{Stage: engine.StageTurn, Attempt: 1, What: "turn 1 of 30: read_file a.go"},
				{Stage: engine.StageTurn, Attempt: 2, What: "turn 2 of 30: edit_file a.go"},
				{Stage: engine.StageVerify, Attempt: 2, What: "run_verify in turn 2"},
				{Stage: engine.StageVerify, Attempt: 3, What: "round 1 of 3, after finish"},
			},
			want: []string{"turn 1 of 30: read_file a.go", "turn 2 of 30: edit_file a.go", "verify running (run_verify in turn 2)", "verify running (round 1 of 3, after finish)"},
		},
		{
			name: "slow tokens are each told", step: 1500 * time.Millisecond,
			events: []engine.ProgressEvent{decode(1), decode(2), decode(3)},
			want:   []string{"decode: 1 tokens", "decode: 2 tokens", "decode: 3 tokens"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
			var got []string
			var numbers []float64
			p := &notifier{now: func() time.Time { return clock }, send: func(n float64, msg string) {
				got = append(got, msg)
				numbers = append(numbers, n)
			}}
			for _, ev := range tt.events {
				p.Observe(ev)
				clock = clock.Add(tt.step)
			}
			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				assert.Contains(t, got[i], w)
				assert.Equal(t, float64(i+1), numbers[i], "progress counts what was sent")
			}
		})
	}
}

func TestProgressOfALongReplyIsNotATokenEach(t *testing.T) {
	f := newFixture(t, true)
	long := "```go\nfunc Add(a, b int) int {\n" + strings.Repeat("\t// Add adds its two arguments and returns their sum.\n", 60) + "\treturn a + b\n}\n```"
	f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &long})
	started := time.Now()
	res, err := f.call(t, context.Background(), "transform", map[string]any{
		"file": "calc.go", "lines": "3-5", "verify": `grep -q "return a + b" calc.go`, "task": "make Add add", "model": "qwen3-coder-30b",
	}, "tok-long")
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	got := f.waitProgress(t, "verify running (attempt 1)")
	took := time.Since(started)
	decodes := strings.Count(got, "decode:")
	// The reply streams in hundreds of chunks; a notification a second at most, whatever the
	// machine's speed, and at least the first.
	assert.GreaterOrEqual(t, decodes, 1)
	assert.LessOrEqual(t, decodes, 1+int(took/progressEvery), "decode notifications in %s:\n%s", took, got)
}
