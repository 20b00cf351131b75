package client

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// llama-server is asked for its prompt progress in a stream, and each report it sends (the shape
// llama.cpp's server writes when return_progress is set) reaches the observer; a report that is
// not a count in range is no report. Another server is not asked.
func TestPromptProgressOfAStream(t *testing.T) {
	chunk := func(total, processed string) string {
		return `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk",` +
			`"prompt_progress":{"total":` + total + `,"cache":0,"processed":` + processed + `,"time_ms":12}}` + "\n\n"
	}
	body := chunk("4096", "4096") + chunk("4096", "5000") + chunk("-1", "0") + chunk("4096", "1.5") +
		`data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	for _, tc := range []struct {
		mimic string
		asked bool
		heard [][2]int
	}{
		{"llama-server", true, [][2]int{{4096, 4096}}},
		{"vllm", false, [][2]int{{4096, 4096}}},
	} {
		t.Run(tc.mimic, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic(tc.mimic))
			s.On("POST", "/v1/chat/completions", scripted.Reply{Headers: map[string]string{"Content-Type": "text/event-stream"}, Body: body})
			var heard [][2]int
			c := clientFor(t, s, func(cfg *Config) {
				cfg.ObservePrompt = func(processed, total int, _ time.Duration) { heard = append(heard, [2]int{processed, total}) }
			})
			res, err := c.Chat(context.Background(), ChatRequest{Model: "tiny", MaxTokens: 16, Stream: true, Messages: []Message{{Role: "user", Content: "hi"}}})
			require.NoError(t, err)
			assert.Equal(t, "ok", res.Answer)
			assert.Equal(t, tc.heard, heard)
			sent := runtest.SentBody(t, s)
			if tc.asked {
				assert.Equal(t, true, sent["return_progress"])
			} else {
				assert.NotContains(t, sent, "return_progress")
			}
		})
	}
}
