package client

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locumdev/locum/rails"
)

// Every error of the client that advises on a setting words it as the front end asks: the
// command line's flag, or a tool call's argument with no "--" in the message.
func TestErrorsWordTheirSettings(t *testing.T) {
	arg := func(s string) string { return "`" + s + "`" }
	fit := PromptFit{Tokens: 900, Context: 1024}
	tests := []struct {
		name      string
		err       rails.Worded
		flag, arg string
	}{
		{"context window", &ContextError{Model: "m", Fit: fit, MaxOutput: 512, Narrow: "{lines} or {symbol}"}, "plus --max-output-tokens 512", "Narrow the input (`lines` or `symbol`), lower `max_output_tokens`"},
		{"a cut prompt", &InputTruncatedError{Read: 1024, Fit: fit, Narrow: "{lines} or {symbol}"}, "Narrow the input (--lines or --symbol)", "Narrow the input (`lines` or `symbol`)"},
		{"whole-reply timeout", &TimeoutError{What: "timeout", After: time.Minute}, "raise --timeout", "raise `timeout`"},
		{"first-token timeout", &TimeoutError{What: "first_token_timeout", After: time.Minute}, "raise --first-token-timeout", "raise `first_token_timeout`"},
		{"probe limit", &TimeoutError{What: probeLimit, After: time.Second}, "not --timeout", "not `timeout`"},
		{"no server", &UnreachableError{URL: "http://127.0.0.1:9/v1", Err: errors.New("refused")}, "point --base-url at it", "point `base_url` at it"},
		{"a redirect", &RedirectError{From: "a", To: "b"}, "point --base-url at the real endpoint", "point `base_url` at the real endpoint"},
		{"a path without /v1", &HTTPError{Method: "GET", URL: "u", Status: 404, Message: "{lines}", TryBaseURL: "x/{v}/v1"}, `: {lines}; the OpenAI API usually lives under /v1: try --base-url x/{v}/v1`, ": {lines}; the OpenAI API usually lives under /v1: try `base_url` x/{v}/v1"},
		{"a stale cache", &BadEmbeddingError{Reason: "a.md {x}", MaybeStaleCache: true}, "a.md {x} (a stale cache? run with --no-cache)", "run with `no_cache`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Contains(t, tt.err.Error(), tt.flag)
			worded := tt.err.Words(arg)
			assert.Contains(t, worded, tt.arg)
			assert.NotContains(t, worded, "--")
		})
	}
}
