package client

import (
	"context"
	"net/http"
	"strings"

	"github.com/locumdev/locum/rails"
)

// A dialect is what one kind of server says beyond the OpenAI API, and where it departs from it.
// Each kind's dialect is a file of its own (lmstudio.go, ollama.go, llamaserver.go,
// llamacpppython.go, vllm.go, unknown.go), and the rest of locum asks the dialect rather than
// comparing kinds: a new server is a new file and a line in dialects.
type dialect interface {
	// kind is locum's name for the server: in status, the journal and dedup's cache keys.
	kind() rails.ServerKind
	// name is the server's name as its makers write it; "" for a server locum cannot name.
	name() string

	// recognise reports whether a probe's first answer names this server.
	recognise(a firstAnswer) bool
	// probePort is the port that names this server when its first answer does not, once
	// describe finds the server's own API there; "" for a server no port names.
	probePort() string
	// describe asks the server what its model list leaves out (its version, the loaded contexts,
	// the weights, its slots) and writes it into info; it reports whether the server answered as
	// this kind does.
	describe(ctx context.Context, c *Client, info *ServerInfo, listed []listedModel) bool

	// thinkingFields are the top-level request fields that hold a model, as m describes it, to
	// limit. A server is sent only what it is known to accept.
	thinkingFields(limit rails.ThinkingCap, m ModelThinking) map[string]any
	// modelThinking asks the server what the model does about thinking: the zero ModelThinking
	// where it cannot say, with the error when asking failed.
	modelThinking(ctx context.Context, c *Client, model string) (ModelThinking, error)
	// checkTools refuses, before any request, tools the server says the model cannot take; nil
	// where the server does not say.
	checkTools(ctx context.Context, c *Client, info *ServerInfo, model string) error
	// streamsUsage reports whether a streamed reply carries what an unstreamed one does: the
	// usage, and a refusal of a prompt over the context. A server whose stream does not is asked
	// unstreamed.
	streamsUsage() bool

	// contextOf is the loaded context the server reports for model, 0 when it does not say.
	contextOf(info *ServerInfo, model string) int64
	// loadedContext asks the server again for model's loaded context, once a reply has shown the
	// model loaded; 0 where it cannot tell.
	loadedContext(ctx context.Context, c *Client, info *ServerInfo, model string) int64
	// countTokens asks the server to count the prompt's tokens, and of those the text's alone
	// where it tells them apart, and says how it counted; false when it cannot count.
	countTokens(ctx context.Context, c *Client, req ChatRequest, thinking map[string]any) (prompt, text int64, method string, ok bool)

	// weights is the server's identity of the weights behind each model it lists with one
	// (ModelWeights).
	weights(ctx context.Context, c *Client, info *ServerInfo) map[string]string
	// digest is the content digest of model's weights where the server reports one; "" else.
	digest(ctx context.Context, c *Client, model string) string
}

// dialects are the servers a probe can name, in the order it tries them: the surest signs first.
// Ollama's sign (every model named name:tag) is the weakest, since another server may list such
// names too, so it comes last.
var dialects = []dialect{vllm{}, llamaServer{}, llamaCppPython{}, lmStudio{}, ollama{}}

// unknown is the dialect of a server no probe names: the OpenAI API and nothing more.
var unknown dialect = unknownServer{}

// byKind is the registry: each kind's dialect.
var byKind = func() map[rails.ServerKind]dialect {
	m := map[rails.ServerKind]dialect{unknown.kind(): unknown}
	for _, d := range dialects {
		m[d.kind()] = d
	}
	return m
}()

// dialectOf is the dialect of a server of kind; the unknown one for a kind without its own.
func dialectOf(kind rails.ServerKind) dialect {
	if d, ok := byKind[kind]; ok {
		return d
	}
	return unknown
}

// ServerName is the server's name as its makers write it, for status; "unknown" for a server
// locum cannot name.
func ServerName(kind rails.ServerKind) string {
	if name := dialectOf(kind).name(); name != "" {
		return name
	}
	return "unknown"
}

// plain is what a dialect embeds for what its server does as any OpenAI-compatible server does:
// no port of its own, nothing said of a model's thinking or tools, usage in a stream, contexts
// and weights only as its model list gives them, no count of tokens and no digest. The dialect
// overrides what its server says besides.
type plain struct{}

func (plain) probePort() string { return "" }

func (plain) modelThinking(context.Context, *Client, string) (ModelThinking, error) {
	return ModelThinking{}, nil
}

func (plain) checkTools(context.Context, *Client, *ServerInfo, string) error { return nil }

func (plain) streamsUsage() bool { return true }

func (plain) contextOf(info *ServerInfo, model string) int64 { return info.listedContext(model) }

func (plain) loadedContext(context.Context, *Client, *ServerInfo, string) int64 { return 0 }

func (plain) countTokens(context.Context, *Client, ChatRequest, map[string]any) (int64, int64, string, bool) {
	return 0, 0, "", false
}

func (plain) weights(_ context.Context, _ *Client, info *ServerInfo) map[string]string {
	return info.listedWeights()
}

func (plain) digest(context.Context, *Client, string) string { return "" }

// ModelThinking is what a server says about one model's thinking; Known is false where it says
// nothing.
type ModelThinking struct {
	Known bool
	// Thinks: the model has the thinking capability.
	Thinks bool
	// Levels: the model takes low/medium/high rather than on/off (gpt-oss).
	Levels bool
}

// templateNoThinking is chat_template_kwargs that switch thinking off in the chat templates
// that have a switch for it (Qwen3's and those built like it).
func templateNoThinking() map[string]any { return map[string]any{"enable_thinking": false} }

// firstAnswer is what a probe's first request, GET /models, tells of the server.
type firstAnswer struct {
	// server is the Server header, lower-cased.
	server string
	// owned are the owners the models are listed under (owned_by).
	owned map[string]bool
	// tagged: the list is not empty and every model is named name:tag.
	tagged bool
}

func newFirstAnswer(header http.Header, listed []listedModel) firstAnswer {
	a := firstAnswer{server: strings.ToLower(header.Get("Server")), owned: map[string]bool{}, tagged: len(listed) > 0}
	for _, m := range listed {
		a.owned[m.OwnedBy] = true
		a.tagged = a.tagged && strings.Contains(m.ID, ":")
	}
	return a
}

// recognised is the dialect a probe's first answer names; nil when none does.
func recognised(a firstAnswer) dialect {
	for _, d := range dialects {
		if d.recognise(a) {
			return d
		}
	}
	return nil
}
