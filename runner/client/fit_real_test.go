package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/scripted"
)

const qwenFixtures = "../scripted/testdata/real-servers/llama-server-0c1e570-qwen/"

// agentRequest is the agent's first request as locum sent it to llama-server 0c1e570 serving
// Qwen2.5-Coder-1.5B: two messages and the seven tools.
func agentRequest(t *testing.T) ChatRequest {
	t.Helper()
	data, err := os.ReadFile(qwenFixtures + "chat_agent_tools.request.json")
	require.NoError(t, err)
	var wire struct {
		Model    string `json:"model"`
		Messages []struct {
			Role, Content string
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				Parameters  map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(data, &wire))
	req := ChatRequest{Model: wire.Model, MaxTokens: 64, Effort: "low"}
	for _, m := range wire.Messages {
		req.Messages = append(req.Messages, Message{Role: m.Role, Content: m.Content})
	}
	for _, tool := range wire.Tools {
		req.Tools = append(req.Tools, Tool{Name: tool.Function.Name, Description: tool.Function.Description, Parameters: tool.Function.Parameters})
	}
	require.Len(t, req.Tools, 7)
	return req
}

func qwenServer(t *testing.T) *scripted.Server {
	t.Helper()
	srv := scripted.New()
	t.Cleanup(srv.Close)
	srv.On("GET", "/v1/models", scripted.MustFixture("llama-server-0c1e570-qwen/models"))
	srv.On("GET", "/props", scripted.MustFixture("llama-server-0c1e570-qwen/props"))
	srv.On("POST", "/v1/chat/completions", scripted.MustFixture("llama-server-0c1e570-qwen/chat_agent_tools"))
	return srv
}

// The count is what the server reads: the prompt rendered with the server's own template, its
// tools and default system message included. The real server read 890 tokens of this request;
// the messages' text alone is 139.
func TestFitCountsWhatTheRealServerReads(t *testing.T) {
	srv := qwenServer(t)
	srv.On("POST", "/apply-template", scripted.MustFixture("llama-server-0c1e570-qwen/apply_template_agent"))
	srv.On("POST", "/tokenize", scripted.MustFixture("llama-server-0c1e570-qwen/tokenize_agent"))
	res, err := clientFor(t, srv).Chat(context.Background(), agentRequest(t))
	require.NoError(t, err)
	require.NotNil(t, res.Usage.In)
	read := *res.Usage.In
	assert.EqualValues(t, 890, read, "what the recorded server read")
	assert.Equal(t, "/apply-template", res.Fit.Method)
	assert.InDelta(t, read, res.Fit.Tokens, float64(read)/50, "the count is within 2%% of what the server read")

	// What was rendered is the request itself, tools and all, and what was counted is that.
	rendered := srv.RequestsTo("/apply-template")
	require.Len(t, rendered, 1)
	var body struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(rendered[0].Body, &body))
	assert.Len(t, body.Messages, 2)
	assert.Len(t, body.Tools, 7)
	var prompt struct{ Prompt string }
	data, err := os.ReadFile(qwenFixtures + "apply_template_agent.body")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &prompt))
	var counted struct{ Content string }
	require.NoError(t, json.Unmarshal(srv.RequestsTo("/tokenize")[0].Body, &counted))
	assert.Equal(t, prompt.Prompt, counted.Content)
}

// With the reply's room the prompt is over the loaded context: refused before the request, by
// the rendered count (the text alone, 139 tokens, would have let it through).
func TestAgentPromptOverTheWindowIsRefused(t *testing.T) {
	srv := qwenServer(t)
	srv.On("POST", "/apply-template", scripted.MustFixture("llama-server-0c1e570-qwen/apply_template_agent"))
	srv.On("POST", "/tokenize", scripted.MustFixture("llama-server-0c1e570-qwen/tokenize_agent"))
	req := agentRequest(t)
	req.MaxTokens = 7400
	_, err := clientFor(t, srv).Chat(context.Background(), req)
	var over *ContextError
	require.True(t, errors.As(err, &over), "%v", err)
	assert.EqualValues(t, 890, over.Fit.Tokens)
	assert.Empty(t, srv.RequestsTo("/v1/chat/completions"), "refused before the request")
}

// A server that cannot render the template counts the text; the template and the tools are
// estimated on top, and the estimate errs high, toward refusing, never under what is read.
func TestFitWithoutTheTemplateEstimatesTheTools(t *testing.T) {
	srv := qwenServer(t)
	srv.On("POST", "/apply-template", scripted.Reply{Status: 404, JSON: json.RawMessage(`{"error":{"code":404,"message":"File Not Found"}}`)})
	srv.On("POST", "/tokenize", scripted.MustFixture("llama-server-0c1e570-qwen/tokenize_agent_text"))
	res, err := clientFor(t, srv).Chat(context.Background(), agentRequest(t))
	require.NoError(t, err)
	assert.Equal(t, "/tokenize", res.Fit.Method)
	assert.GreaterOrEqual(t, res.Fit.Tokens, *res.Usage.In, "the estimate of the tools errs high")
	assert.Less(t, res.Fit.Tokens, 2**res.Usage.In, "and stays near")
}

// A rendering shorter than the messages' own text is not taken for the prompt: the count falls
// back to the text and the estimate, never near zero.
func TestFitRefusesAnEmptyRendering(t *testing.T) {
	srv := qwenServer(t)
	srv.On("POST", "/apply-template", scripted.Reply{JSON: json.RawMessage(`{"prompt":""}`)})
	srv.On("POST", "/tokenize", scripted.MustFixture("llama-server-0c1e570-qwen/tokenize_agent_text"))
	res, err := clientFor(t, srv).Chat(context.Background(), agentRequest(t))
	require.NoError(t, err)
	assert.Equal(t, "/tokenize", res.Fit.Method)
	assert.GreaterOrEqual(t, res.Fit.Tokens, *res.Usage.In)
}

// SmolLM2-135M-Instruct's own template (ChatML) renders no tools: the recorded llama-server read
// 163 tokens of the agent's first request with its seven tools and 163 without, and answered in
// prose. Its GET /props says so, and the request is refused before it is sent.
func TestToolsRefusedWhereTheTemplateDropsThem(t *testing.T) {
	const dir = "llama-server-0c1e570-smollm2/"
	for _, name := range []string{"chat_agent_tools", "chat_agent_notools"} {
		var reply struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		data, err := os.ReadFile("../scripted/testdata/real-servers/" + dir + name + ".body")
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &reply))
		assert.Equal(t, 163, reply.Usage.PromptTokens, "%s: the server read the same prompt with tools and without", name)
	}

	srv := scripted.New()
	t.Cleanup(srv.Close)
	srv.On("GET", "/v1/models", scripted.MustFixture(dir+"models"))
	srv.On("GET", "/props", scripted.MustFixture(dir+"props"))
	srv.On("POST", "/v1/chat/completions", scripted.MustFixture(dir+"chat_agent_tools"))
	req := agentRequest(t)
	req.Model = "smollm2-135m-instruct"
	_, err := clientFor(t, srv).Chat(context.Background(), req)
	var refused *ToolsUnsupportedError
	require.ErrorAs(t, err, &refused)
	assert.Contains(t, err.Error(), "chat_template_caps.supports_tools is false")
	assert.Empty(t, srv.RequestsTo("/v1/chat/completions"), "nothing was sent")

	// Without tools the same model is asked (and, as recorded, runs out of its 64 tokens).
	req.Tools = nil
	_, err = clientFor(t, srv).Chat(context.Background(), req)
	assert.False(t, errors.As(err, &refused), "%v", err)
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 1)

	// Qwen's template renders them, and the request is sent.
	qwen := qwenServer(t)
	qwen.On("POST", "/apply-template", scripted.MustFixture("llama-server-0c1e570-qwen/apply_template_agent"))
	qwen.On("POST", "/tokenize", scripted.MustFixture("llama-server-0c1e570-qwen/tokenize_agent"))
	_, err = clientFor(t, qwen).Chat(context.Background(), agentRequest(t))
	require.NoError(t, err)
}

// Ollama answers a model's capabilities; one without "tools" is refused before the request.
func TestToolsRefusedWhereOllamaListsNoToolsCapability(t *testing.T) {
	for _, tc := range []struct {
		caps    string
		refused bool
	}{
		{`["completion"]`, true},
		{`["completion","tools"]`, false},
		// Ollama before 0.6.4 lists none: nothing is known, nothing refused.
		{`[]`, false},
	} {
		srv := scripted.New()
		t.Cleanup(srv.Close)
		require.NoError(t, srv.Mimic("ollama"))
		srv.On("POST", "/api/show", scripted.Reply{JSON: json.RawMessage(`{"capabilities":` + tc.caps + `}`)})
		srv.On("POST", "/v1/chat/completions", scripted.Reply{JSON: json.RawMessage(`{"choices":[{"message":{"role":"assistant","content":"","tool_calls":[{"id":"a","type":"function","function":{"name":"finish","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`)})
		req := agentRequest(t)
		req.Model = "tiny"
		_, err := clientFor(t, srv).Chat(context.Background(), req)
		var refused *ToolsUnsupportedError
		assert.Equal(t, tc.refused, errors.As(err, &refused), "%s: %v", tc.caps, err)
		if tc.refused {
			assert.Contains(t, err.Error(), `the capabilities of POST /api/show are [completion], without "tools"`)
			assert.Empty(t, srv.RequestsTo("/v1/chat/completions"))
		}
	}
}

// Without tools the count is what the server reads too, for a template that adds a default
// system message (Qwen2.5, 152 read) and one made of markers (SmolLM2's ChatML, 163 read).
func TestFitCountsWhatTheRealServerReadsWithoutTools(t *testing.T) {
	for _, tc := range []struct {
		dir, model string
		read       int64
	}{
		{"llama-server-0c1e570-qwen/", "qwen2.5-coder-1.5b-instruct", 152},
		{"llama-server-0c1e570-smollm2/", "smollm2-135m-instruct", 163},
	} {
		t.Run(tc.model, func(t *testing.T) {
			srv := scripted.New()
			t.Cleanup(srv.Close)
			srv.On("GET", "/v1/models", scripted.MustFixture(tc.dir+"models"))
			srv.On("GET", "/props", scripted.MustFixture(tc.dir+"props"))
			srv.On("POST", "/apply-template", scripted.MustFixture(tc.dir+"apply_template_agent_notools"))
			srv.On("POST", "/tokenize", scripted.MustFixture(tc.dir+"tokenize_agent_notools"))
			srv.On("POST", "/v1/chat/completions", scripted.MustFixture(tc.dir+"chat_agent_notools"))
			req := agentRequest(t)
			req.Model, req.Tools, req.MaxTokens = tc.model, nil, 8
			res, err := clientFor(t, srv).Chat(context.Background(), req)
			if err != nil {
				require.ErrorContains(t, err, "cut off", "only the recorded reply's token limit may end it")
			}
			require.NotNil(t, res)
			require.NotNil(t, res.Usage.In)
			assert.Equal(t, tc.read, *res.Usage.In, "what the recorded server read")
			assert.Equal(t, "/apply-template", res.Fit.Method)
			assert.InDelta(t, tc.read, res.Fit.Tokens, float64(tc.read)/50, "the count is within 2%% of what the server read")

			// What locum asked the template to render is what was recorded being rendered: the
			// two messages, no tools.
			sent := srv.RequestsTo("/apply-template")
			require.Len(t, sent, 1)
			var got, want struct {
				Messages []struct{ Role, Content string } `json:"messages"`
				Tools    json.RawMessage                  `json:"tools"`
			}
			require.NoError(t, json.Unmarshal(sent[0].Body, &got))
			recorded, err := os.ReadFile("../scripted/testdata/real-servers/" + tc.dir + "apply_template_agent_notools.request.json")
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(recorded, &want))
			assert.Equal(t, want.Messages, got.Messages)
			assert.Empty(t, got.Tools)
		})
	}
}

// The recorded llama-server says it decodes four requests at once (total_slots in /props): a
// workflow's pool sends it that many items at a time.
func TestProbeReadsTheRealServersSlots(t *testing.T) {
	info, err := clientFor(t, qwenServer(t)).Probe(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 4, info.Slots)
}
