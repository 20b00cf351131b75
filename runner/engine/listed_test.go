package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// A chat mode's connect step asks the server for its models before anything else: a model a
// listing server does not list is refused before any request unless the operator forces it, and
// a server that lists none lets the run go on with the journal saying so.
func TestConnectChatChecksTheModelIsListed(t *testing.T) {
	cases := []struct {
		name    string
		model   string
		models  string // the server's /v1/models; "" mimics LM Studio
		allow   bool
		kind    string // the result's error kind; "" for OK
		message string
		why     string // the model_unchecked event's why; "" for none
	}{
		{name: "listed", model: runtest.Model},
		{name: "not listed", model: "gpt-4o", kind: "model_not_listed",
			message: "does not list gpt-4o (it lists qwen3-coder-30b, text-embedding-nomic-embed-text-v1.5); it would answer with whatever model it has loaded, under the name asked, so nothing was sent: name a model it lists with --model, or send this one anyway with --allow-unlisted-model"},
		{name: "not listed, forced by the operator", model: "gpt-4o", allow: true, why: UncheckedAllowed},
		{name: "a server that lists none", model: "gpt-4o", models: `{"object":"list","data":[]}`, why: UncheckedListsNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			if tc.models == "" {
				require.NoError(t, s.Mimic("lmstudio"))
			} else {
				s.On("GET", "/v1/models", runtest.JSON(tc.models))
			}
			s.On("POST", "/v1/chat/completions", runtest.Answer("done"))
			flags := map[string]string{"base-url": s.BaseURL()}
			if tc.allow {
				flags["allow-unlisted-model"] = "true"
			}
			journal := filepath.Join(t.TempDir(), "run.jsonl")
			spec := RunSpec{Mode: "transform", Settings: runtest.Settings(t, "transform", flags), Model: tc.model, Routing: "operator", JournalPath: journal}
			connect := Step{Name: "connect", Run: func(ctx context.Context, r *Run) error { return r.ConnectChat(ctx) }}
			res := Execute(context.Background(), spec, []Step{connect, chatStep("hi")})
			var unchecked []map[string]any
			for _, ev := range readJournal(t, journal) {
				if ev["event"] == "model_unchecked" {
					unchecked = append(unchecked, ev)
				}
			}
			if tc.kind != "" {
				require.NotNil(t, res.Error)
				assert.Equal(t, StatusRefused, res.Status)
				assert.Equal(t, 1, res.ExitCode)
				assert.Equal(t, tc.kind, res.Error.Kind)
				assert.Contains(t, res.Error.Message, tc.message)
				assert.Empty(t, s.RequestsTo("/v1/chat/completions"), "nothing is sent for a model the server does not list")
				assert.Equal(t, 0, res.Attempts)
				assert.Empty(t, unchecked)
				return
			}
			require.Nil(t, res.Error)
			assert.Len(t, s.RequestsTo("/v1/chat/completions"), 1)
			if tc.why == "" {
				assert.Empty(t, unchecked)
				return
			}
			require.Len(t, unchecked, 1)
			assert.Equal(t, tc.why, unchecked[0]["why"])
			assert.Equal(t, tc.model, unchecked[0]["model"])
		})
	}
}

// A server that does not answer ends the connect step, naming the endpoint: no step after it
// (a baseline verify, a worktree) runs.
func TestConnectChatFindsNoServerFirst(t *testing.T) {
	base := "http://" + scripted.RefusedAddr() + "/v1"
	ran := false
	connect := Step{Name: "connect", Run: func(ctx context.Context, r *Run) error { return r.ConnectChat(ctx) }}
	after := Step{Name: "baseline", Run: func(context.Context, *Run) error { ran = true; return nil }}
	spec := RunSpec{Mode: "transform", Settings: runtest.SettingsFor(t, base), Model: runtest.Model, Routing: "operator",
		JournalPath: filepath.Join(t.TempDir(), "run.jsonl")}
	res := Execute(context.Background(), spec, []Step{connect, after})
	require.NotNil(t, res.Error)
	assert.Equal(t, "no_server", res.Error.Kind)
	assert.Contains(t, res.Error.Message, "no server answers at "+base)
	assert.False(t, ran, "the step after connect ran with no server")
}
