package job

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scripted"
	"github.com/locumdev/locum/schema"
)

// echoMode is a mode of this test's own, to show what adding a mode takes: its Mode, registered
// from init with the declared settings it takes, and a Job whose steps do the work. Nothing else
// in the tree changes for it: a pack declares it like any mode, the job layer resolves its
// settings and chooses its model, and the engine runs it, journals it and writes its receipt.
var echoMode = engine.Mode{Name: "test-echo", Model: engine.ChatModel, Settings: []packs.Key{packs.MaxOutputTokens, packs.Effort}}

func init() { engine.RegisterMode(echoMode) }

// echoDetails are the mode's part of a run's result, as a mode's package declares them.
type echoDetails struct {
	Answer string `json:"answer"`
}

// echoJob asks the model to repeat a text.
type echoJob struct {
	text   string
	answer string
}

func (*echoJob) Mode() engine.Mode { return echoMode }

func (j *echoJob) TaskText() (string, string) { return "the text", j.text }

func (j *echoJob) Steps(engine.Place) []engine.Step {
	return []engine.Step{
		{Name: "connect", Run: func(_ context.Context, r *engine.Run) error { return r.Connect() }},
		{Name: "echo", Run: func(ctx context.Context, r *engine.Run) error {
			s := r.Spec.Settings
			res, err := r.Chat(ctx, "echo", client.ChatRequest{Model: r.Spec.Model, MaxTokens: s.Int(packs.MaxOutputTokens), Effort: s.String(packs.Effort),
				Messages: []client.Message{{Role: "user", Content: "Repeat this text: " + j.text}}})
			if err != nil {
				return err
			}
			j.answer = res.Answer
			r.SetDetails(&echoDetails{Answer: res.Answer})
			return nil
		}},
	}
}

func TestAModeIsItsPackageAndItsRegistration(t *testing.T) {
	llm := scripted.New()
	t.Cleanup(llm.Close)
	require.NoError(t, llm.Mimic("lmstudio"))
	said := "hello"
	llm.On("POST", "/v1/chat/completions", scripted.Reply{Answer: &said})

	root := t.TempDir()
	gittest.Init(t, root)
	write := func(rel, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, rel), []byte(text), 0o644))
	}
	write(".locum/workspace.json", `{"packs":["tools/local-llm","tools/echo"]}`)
	write(".locum/packs/tools/echo/pack.json", `{"portulan":{"pack":"1.1"},"name":"echo","category":"tools","contributes":{"modes":{"test-echo":{"max_output_tokens":64,"effort":"none"}}}}`)
	v, err := schema.New()
	require.NoError(t, err)
	env := map[string]string{"LOCUM_BASE_URL": llm.BaseURL(), "XDG_STATE_HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir(), "HOME": t.TempDir()}
	l, err := New(Operator{Dir: root, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Version: "test"}, v)
	require.NoError(t, err)

	j := &echoJob{text: "hello"}
	p, err := l.Prepare(context.Background(), j.Mode(), Call{Model: "m"})
	require.NoError(t, err)
	set, _ := p.Settings().Get(packs.MaxOutputTokens)
	assert.Equal(t, packs.Setting{Key: "max_output_tokens", Value: "64", Source: "pack tools/echo"}, set)
	_, other := p.Settings().Get(packs.MaxAttempts)
	assert.False(t, other, "a mode takes the settings it registered, no other mode's")
	res, err := p.Run(context.Background(), j)
	require.NoError(t, err)
	require.Equal(t, engine.StatusOK, res.Status, "%+v", res.Error)
	assert.Equal(t, "hello", j.answer)
	assert.Contains(t, res.Receipt(), "OK mode=test-echo model=m routing=operator attempts=1 in=100t out=20t")
	require.NotNil(t, res.Journal)
	journal, err := os.ReadFile(*res.Journal)
	require.NoError(t, err)
	assert.Contains(t, string(journal), `"mode":"test-echo"`)
	var req map[string]any
	require.NoError(t, json.Unmarshal(llm.RequestsTo("/v1/chat/completions")[0].Body, &req))
	assert.EqualValues(t, 64, req["max_tokens"], "the pack's setting reached the request")

	// The rails hold for it as for any mode: its text is held to the input budget.
	_, err = p.Run(context.Background(), &echoJob{text: string(make([]byte, 40000))})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the text is 40000 bytes, over the input budget")
}

// A pack may declare only a registered mode, and only the settings that mode takes.
func TestAPackDeclaresOnlyRegisteredModes(t *testing.T) {
	v, err := schema.New()
	require.NoError(t, err)
	for _, tc := range []struct {
		name, modes, want string
	}{
		{"an unknown mode", `{"nope":{}}`, `/contributes/modes/nope: "nope" is not a mode this locum knows`},
		{"a setting the mode does not take", `{"test-echo":{"max_attempts":2}}`, `/contributes/modes/test-echo/max_attempts: "max_attempts" is not a setting of mode test-echo`},
		{"a value its kind does not parse", `{"test-echo":{"effort":"huge"}}`, `/contributes/modes/test-echo/effort: want one of none, low, medium, high`},
		{"the endpoint", `{"test-echo":{"base_url":"http://127.0.0.1:1/v1"}}`, `"base_url" is not a setting of mode test-echo`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, ".locum", "packs", "tools", "echo")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, ".locum", "workspace.json"), []byte(`{"packs":["tools/local-llm","tools/echo"]}`), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "pack.json"), []byte(`{"portulan":{"pack":"1.1"},"name":"echo","category":"tools","contributes":{"modes":`+tc.modes+`}}`), 0o644))
			_, err := packs.Compose(v, root)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
