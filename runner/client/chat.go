package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/locumdev/locum/rails"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // system, user, assistant or tool
	Content string `json:"content"`
	// ToolCalls are the native tool calls of an assistant message; ToolCallID names the call a
	// tool message answers.
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Tool is a function the model may call (OpenAI tools).
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any // a JSON schema
}

// ToolCall is one call a reply made. Arguments is the JSON text as the server sent it; servers
// that send an object instead of a string get it as its JSON text. ID may be "" (llama-server).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ChatRequest is one chat completion under the rails.
type ChatRequest struct {
	Model     string
	Messages  []Message
	MaxTokens int64
	Effort    string
	Seed      *int64
	// Temperature, when set, is the sampling temperature asked for; nil leaves the server's own.
	Temperature *float64
	// BeforeSend, when set, is told what is about to be sent, just before the request goes out:
	// max_tokens as lowered to fit the context. It is not called for a request refused before
	// sending.
	BeforeSend func(maxTokens int64)
	// Stream asks for a streamed reply, which lets the receipt split prefill (ttft) from decode.
	Stream bool
	// ResponseSchema, when set, asks for JSON output that fits it (where the server takes
	// response_format).
	ResponseSchema map[string]any
	// Narrow is the flag that narrows the input, named in advice; "" for a mode without one.
	Narrow string
	// Room names the setting MaxTokens follows, as a template (rails.Words), where it is not
	// max_output_tokens: named in the advice on a cut-off reply.
	Room string
	// FitMaxTokens says MaxTokens is a default nobody chose: where the prompt leaves less room in
	// the loaded context, the request asks for the room left (at least MinFittedOutput tokens)
	// instead of being refused.
	FitMaxTokens bool
	// Tools are offered as native tool calls. A request with tools is never streamed:
	// llama-server refuses tools with stream (HTTP 500).
	Tools []Tool
}

// Usage is what the server reported; nil means it did not say.
type Usage struct {
	In  *int64 `json:"in"`
	Out *int64 `json:"out"`
}

// ChatResult is a reply and its figures, whatever its class.
type ChatResult struct {
	rails.Classified
	FinishReason string
	Usage        Usage
	// TTFT is the time to the first token of a streamed reply; 0 when not streamed.
	TTFT     time.Duration
	Elapsed  time.Duration
	Streamed bool
	Bytes    int
	// Sent is the request's thinking switch, for the journal.
	Sent map[string]any
	// Fit is how the prompt measured against the model's context.
	Fit *PromptFit
	// Decode is the decode phase's tokens and time, from the server where it reports them, else
	// measured over a streamed reply; nil when neither means anything.
	Decode *Decode
	// CapabilitiesError is why the server could not say what the model does (Ollama's
	// /api/show failed), so the thinking switch was the one every model accepts.
	CapabilitiesError string
	// ToolCalls are the reply's native tool calls, in order.
	ToolCalls []ToolCall
}

// Decode is how many tokens a reply's decode produced and how long it took.
type Decode struct {
	Tokens int64
	Time   time.Duration
	// Source is "server" for the server's own timings, "measured" for locum's clock.
	Source string
}

// minDecodeWindow is the shortest decode locum times itself: a server that sends its first bytes
// late, many events in one read, leaves a window of a millisecond, and a rate over it is noise.
const minDecodeWindow = 250 * time.Millisecond

// wireTimings are the decode figures servers add to a reply outside the OpenAI shape:
// llama-server's timings, and Ollama's native eval_count and eval_duration where a reply carries
// them.
type wireTimings struct {
	Timings *struct {
		PredictedN  *float64 `json:"predicted_n"`
		PredictedMS *float64 `json:"predicted_ms"`
	} `json:"timings"`
	EvalCount    *float64 `json:"eval_count"`
	EvalDuration *float64 `json:"eval_duration"` // nanoseconds
}

func (w *wireTimings) decode() *Decode {
	var n, ms float64
	switch {
	case w.Timings != nil && w.Timings.PredictedN != nil && w.Timings.PredictedMS != nil:
		n, ms = *w.Timings.PredictedN, *w.Timings.PredictedMS
	case w.EvalCount != nil && w.EvalDuration != nil:
		n, ms = *w.EvalCount, *w.EvalDuration/1e6
	default:
		return nil
	}
	if n <= 0 || ms <= 0 || n > 1e9 || ms > 1e9 {
		return nil
	}
	return &Decode{Tokens: int64(n), Time: time.Duration(ms * float64(time.Millisecond)), Source: "server"}
}

// measuredDecode is the decode of a streamed reply as locum timed it, when the window is long
// enough to mean something.
func measuredDecode(res *ChatResult) *Decode {
	window := res.Elapsed - res.TTFT
	if !res.Streamed || res.TTFT <= 0 || res.Usage.Out == nil || *res.Usage.Out <= 0 || window < minDecodeWindow {
		return nil
	}
	return &Decode{Tokens: *res.Usage.Out, Time: window, Source: "measured"}
}

// Chat sends one chat completion and classifies the reply. It always sends max_tokens (servers
// ignore max_completion_tokens) and the thinking switch the server obeys. A reply that is not an
// answer comes back with its result and a *rails.ReplyError.
func (c *Client) Chat(ctx context.Context, req ChatRequest) (*ChatResult, error) {
	info, err := c.Probe(ctx)
	if err != nil {
		return nil, err
	}
	d := dialectOf(info.Kind)
	if len(req.Tools) > 0 {
		if err := d.checkTools(ctx, c, info, req.Model); err != nil {
			return nil, err
		}
	}
	capabilities, capErr := d.modelThinking(ctx, c, req.Model)
	thinking := d.thinkingFields(rails.CapThinking(req.Effort), capabilities)
	fit, err := c.fit(ctx, info, req, thinking)
	if err != nil {
		return nil, err
	}
	if fit.MaxTokens > 0 {
		req.MaxTokens = fit.MaxTokens
	}
	params := openai.ChatCompletionNewParams{
		Model:     req.Model,
		MaxTokens: openai.Int(req.MaxTokens),
		Messages:  wireMessages(req.Messages),
		Tools:     wireTools(req.Tools),
	}
	if req.Seed != nil {
		params.Seed = openai.Int(*req.Seed)
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.ResponseSchema != nil {
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{
				Name: "reply", Schema: req.ResponseSchema, Strict: openai.Bool(true),
			}},
		}
	}
	params.SetExtraFields(thinking)

	if req.BeforeSend != nil {
		req.BeforeSend(req.MaxTokens)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var res *ChatResult
	// A server whose stream leaves out the usage is asked unstreamed, where it reports it.
	if req.Stream && len(req.Tools) == 0 && d.streamsUsage() {
		var extra []option.RequestOption
		if pp, ok := d.(promptProgress); ok {
			extra = append(extra, option.WithJSONSet(pp.promptProgressField(), true))
		}
		res, err = c.chatStream(ctx, params, extra...)
		if refusedStream(err) {
			res, err = c.chatOnce(ctx, params)
		}
	} else {
		res, err = c.chatOnce(ctx, params)
	}
	if res != nil {
		res.Sent, res.Fit = thinking, fit
		if res.Decode == nil {
			res.Decode = measuredDecode(res)
		}
	}
	if err != nil {
		if over := c.contextExceeded(info, req, err); over != nil {
			return nil, over
		}
		// A reply cut off by a signal or a timeout still carries what was measured up to then.
		return res, err
	}
	if capErr != nil {
		res.CapabilitiesError = capErr.Error()
	}
	if fit.Context == 0 && res.Usage.In != nil {
		if n := d.loadedContext(ctx, c, info, req.Model); n > 0 {
			fit.Context = n
		}
	}
	if cut := truncated(fit, res.Usage, req.Narrow); cut != nil {
		return res, cut
	}
	if len(req.Tools) > 0 && len(res.ToolCalls) > 0 && (res.Class == rails.ClassEmpty || res.Class == rails.ClassThinkOnly) {
		// Tools were offered and the reply called them: that is the answer, though its text is empty.
		res.Class = rails.ClassAnswer
	}
	if res.Class != rails.ClassAnswer {
		re := &rails.ReplyError{Class: res.Class, MaxOutputTokens: req.MaxTokens, Effort: req.Effort, Narrow: req.Narrow, Room: req.Room, Detail: replyDetail(res)}
		if res.Usage.Out != nil {
			re.Written = *res.Usage.Out
		}
		return res, re
	}
	return res, nil
}

// wireMessages are the messages as the request sends them.
func wireMessages(msgs []Message) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case "system":
			out = append(out, openai.SystemMessage(m.Content))
		case "assistant":
			out = append(out, assistantMessage(m))
		case "tool":
			out = append(out, openai.ToolMessage(m.Content, m.ToolCallID))
		default:
			out = append(out, openai.UserMessage(m.Content))
		}
	}
	return out
}

// wireTools are the tools as the request offers them; nil for none.
func wireTools(tools []Tool) []openai.ChatCompletionToolUnionParam {
	var out []openai.ChatCompletionToolUnionParam
	for _, t := range tools {
		out = append(out, openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: t.Parameters,
		}))
	}
	return out
}

// assistantMessage is an assistant turn, with the tool calls it made.
func assistantMessage(m Message) openai.ChatCompletionMessageParamUnion {
	if len(m.ToolCalls) == 0 {
		return openai.AssistantMessage(m.Content)
	}
	var a openai.ChatCompletionAssistantMessageParam
	if m.Content != "" {
		a.Content.OfString = openai.String(m.Content)
	}
	for _, tc := range m.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: tc.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
			},
		})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// decodeToolCalls reads the tool calls of a reply; one that names no function is kept with an
// empty name, so the caller can tell the model its call was malformed.
func decodeToolCalls(raws []json.RawMessage) []ToolCall {
	var out []ToolCall
	for _, raw := range raws {
		var w struct {
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		_ = json.Unmarshal(raw, &w)
		tc := ToolCall{ID: w.ID, Name: w.Function.Name}
		var text string
		if json.Unmarshal(w.Function.Arguments, &text) == nil {
			tc.Arguments = text
		} else {
			tc.Arguments = string(w.Function.Arguments)
		}
		out = append(out, tc)
	}
	return out
}

func replyDetail(r *ChatResult) string {
	switch {
	case r.Class == rails.ClassEmpty && r.FinishReason == "tool_calls":
		return "it called a tool instead"
	case r.Class == rails.ClassMalformed:
		return r.Malformed
	}
	return ""
}

// refusedStream reports a server that rejected the stream parameter itself.
func refusedStream(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && (he.Status == 400 || he.Status == 422 || he.Status == 501) &&
		strings.Contains(strings.ToLower(he.Message), "stream")
}

func (c *Client) chatOnce(ctx context.Context, params openai.ChatCompletionNewParams) (*ChatResult, error) {
	start := time.Now()
	var raw []byte
	_, err := c.chat.New(ctx, params, option.WithResponseBodyInto(&raw))
	if err != nil {
		return nil, c.transportError(err, http.MethodPost, c.BaseURL()+"/chat/completions")
	}
	res := decodeChat(raw)
	res.Elapsed = time.Since(start)
	return res, nil
}

// nonFinite matches the NaN and Infinity some servers print for figures they did not measure.
var nonFinite = regexp.MustCompile(`:\s*-?(NaN|Infinity)\b`)

// unmarshalRepaired decodes a reply as sent, and only when that fails, once more with the bare
// NaN and Infinity values some servers print for figures they did not measure read as null: not
// JSON, but the rest of the reply is worth reading. The repair never touches a string, so the
// model's words reach the mode as it wrote them.
func unmarshalRepaired(raw []byte, into any) error {
	err := json.Unmarshal(raw, into)
	if err == nil {
		return nil
	}
	fixed, changed := repairNonFinite(raw)
	if !changed {
		return err
	}
	return json.Unmarshal(fixed, into)
}

// repairNonFinite replaces NaN, Infinity and -Infinity written as values (after a colon, a comma
// or an opening bracket) with null, outside strings only.
func repairNonFinite(raw []byte) ([]byte, bool) {
	out := make([]byte, 0, len(raw))
	inString, escaped, changed := false, false, false
	var prev byte // the last byte outside a string that is not white space
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				prev = c
			}
			continue
		}
		if prev == ':' || prev == ',' || prev == '[' {
			if n := nonFiniteAt(raw[i:]); n > 0 {
				out = append(out, "null"...)
				i += n - 1
				prev, changed = 'l', true
				continue
			}
		}
		out = append(out, c)
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\r', '\n':
			continue
		}
		prev = c
	}
	return out, changed
}

// nonFiniteAt is the length of the NaN, Infinity or -Infinity that b starts with, or 0.
func nonFiniteAt(b []byte) int {
	for _, word := range []string{"NaN", "Infinity", "-Infinity"} {
		n := len(word)
		if len(b) >= n && string(b[:n]) == word && (len(b) == n || !isWordByte(b[n])) {
			return n
		}
	}
	return 0
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

type wireMessage struct {
	Content          *string           `json:"content"`
	Reasoning        string            `json:"reasoning"`
	ReasoningContent string            `json:"reasoning_content"`
	ToolCalls        []json.RawMessage `json:"tool_calls"`
}

type wireUsage struct {
	PromptTokens     json.RawMessage `json:"prompt_tokens"`
	CompletionTokens json.RawMessage `json:"completion_tokens"`
}

func (u *wireUsage) usage() Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{In: count(u.PromptTokens), Out: count(u.CompletionTokens)}
}

// count reads a token figure; anything but a whole non-negative number is "not reported".
func count(raw json.RawMessage) *int64 {
	var n int64
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &n) != nil || n < 0 {
		return nil
	}
	return &n
}

func decodeChat(raw []byte) *ChatResult {
	res := &ChatResult{Bytes: len(raw)}
	var body struct {
		Choices []struct {
			FinishReason string      `json:"finish_reason"`
			Message      wireMessage `json:"message"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
		wireTimings
	}
	var reply rails.Reply
	switch err := unmarshalRepaired(raw, &body); {
	case err != nil:
		reply.Malformed = "not JSON: " + err.Error()
	case len(body.Choices) == 0:
		reply.Malformed = "no choices"
	default:
		ch := body.Choices[0]
		if ch.Message.Content != nil {
			reply.Content = *ch.Message.Content
		}
		reply.Reasoning = ch.Message.Reasoning + ch.Message.ReasoningContent
		reply.FinishReason = ch.FinishReason
		reply.ToolCalls = len(ch.Message.ToolCalls)
		res.ToolCalls = decodeToolCalls(ch.Message.ToolCalls)
		res.FinishReason = ch.FinishReason
		res.Usage = body.Usage.usage()
		res.Decode = body.decode()
	}
	res.Classified = rails.Classify(reply)
	return res
}

// chatStream sends the request with stream and include_usage, reads the server-sent events, and
// times the first token.
func (c *Client) chatStream(ctx context.Context, params openai.ChatCompletionNewParams, extra ...option.RequestOption) (*ChatResult, error) {
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	var gotFirst atomic.Bool
	var ttft time.Duration
	firstToken := func() {
		if !gotFirst.Swap(true) {
			ttft = time.Since(start)
		}
	}
	if c.cfg.FirstTokenTimeout > 0 {
		timer := time.AfterFunc(c.cfg.FirstTokenTimeout, func() {
			if !gotFirst.Load() {
				cancel(errFirstToken)
			}
		})
		defer timer.Stop()
	}
	var resp *http.Response
	opts := append([]option.RequestOption{option.WithJSONSet("stream", true), option.WithResponseBodyInto(&resp)}, extra...)
	_, err := c.chat.New(ctx, params, opts...)
	if err != nil {
		return nil, c.transportError(causeOr(ctx, err), http.MethodPost, c.BaseURL()+"/chat/completions")
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "text/event-stream") {
		// The server answered with a whole reply instead of a stream: read it as one.
		firstToken()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, c.transportError(causeOr(ctx, err), http.MethodPost, c.BaseURL()+"/chat/completions")
		}
		res := decodeChat(raw)
		res.Elapsed = time.Since(start)
		return res, nil
	}
	dec := ssestream.NewDecoder(resp)
	defer dec.Close()
	var content, reasoning strings.Builder
	var reply rails.Reply
	res := &ChatResult{Streamed: true}
	prog := newProgress(start)
	prog.observe, prog.observePrompt = c.cfg.Observe, c.cfg.ObservePrompt
	sawChunk := false
	for dec.Next() {
		ev := dec.Event()
		res.Bytes += len(ev.Data)
		data := strings.TrimSpace(string(ev.Data))
		if data == "" {
			continue
		}
		if data == "[DONE]" {
			break
		}
		var chunk struct {
			Choices []struct {
				FinishReason *string     `json:"finish_reason"`
				Delta        wireMessage `json:"delta"`
			} `json:"choices"`
			Usage          *wireUsage          `json:"usage"`
			Error          json.RawMessage     `json:"error"`
			PromptProgress *wirePromptProgress `json:"prompt_progress"`
			wireTimings
		}
		if err := unmarshalRepaired(ev.Data, &chunk); err != nil {
			reply.Malformed = "a stream chunk is not JSON: " + err.Error()
			break
		}
		if len(chunk.Error) > 0 {
			return nil, &HTTPError{Method: http.MethodPost, URL: c.BaseURL() + "/chat/completions", Status: resp.StatusCode, Message: serverMessage(ev.Data)}
		}
		sawChunk = true
		if chunk.Usage != nil {
			res.Usage = chunk.Usage.usage()
		}
		if d := chunk.decode(); d != nil {
			res.Decode = d
		}
		if pp := chunk.PromptProgress; pp != nil {
			prog.prompt(pp.Processed, pp.Total)
		}
		for _, ch := range chunk.Choices {
			d := ch.Delta
			if d.Content != nil && *d.Content != "" || d.Reasoning != "" || d.ReasoningContent != "" {
				firstToken()
			}
			if d.Content != nil {
				content.WriteString(*d.Content)
			}
			reasoning.WriteString(d.Reasoning + d.ReasoningContent)
			reply.ToolCalls += len(d.ToolCalls)
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				reply.FinishReason = *ch.FinishReason
			}
		}
		prog.update(content.Len() + reasoning.Len())
	}
	prog.done()
	partial := func(err error) (*ChatResult, error) {
		res.TTFT, res.Elapsed = ttft, time.Since(start)
		return res, c.transportError(err, http.MethodPost, c.BaseURL()+"/chat/completions")
	}
	if err := dec.Err(); err != nil {
		return partial(causeOr(ctx, err))
	}
	if err := context.Cause(ctx); err != nil {
		return partial(err)
	}
	if !sawChunk && reply.Malformed == "" {
		reply.Malformed = "the stream carried no chunk (an empty stream is what some servers send for a prompt over the model's context)"
	}
	reply.Content, reply.Reasoning = content.String(), reasoning.String()
	res.Classified = rails.Classify(reply)
	res.FinishReason = reply.FinishReason
	res.TTFT = ttft
	res.Elapsed = time.Since(start)
	return res, nil
}

// causeOr prefers the context's cause (a first-token timeout) over the error it produced.
func causeOr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// progress tells an observer, at most every 250 ms, how a streamed reply grows and how far the
// server read the prompt; drawing it is the front end's business.
type progress struct {
	start time.Time

	observe       StreamObserver
	observed      time.Time
	chars, deltas int

	observePrompt  PromptObserver
	observedPrompt time.Time
}

// prompt reports the server's own count of the prompt tokens it has read, of total; a count that
// is not a whole number of tokens in range is no report.
func (p *progress) prompt(processed, total float64) {
	if p.observePrompt == nil || total <= 0 || total > 1e9 || processed < 0 || processed > total ||
		processed != math.Trunc(processed) || total != math.Trunc(total) {
		return
	}
	if processed == total || time.Since(p.observedPrompt) >= 250*time.Millisecond {
		p.observedPrompt = time.Now()
		p.observePrompt(int(processed), int(total), time.Since(p.start))
	}
}

func newProgress(start time.Time) *progress {
	return &progress{start: start}
}

func (p *progress) update(chars int) {
	if chars > p.chars {
		p.deltas++
	}
	p.chars = chars
	if p.observe != nil && time.Since(p.observed) >= 250*time.Millisecond {
		p.observed = time.Now()
		p.observe(chars, p.deltas, time.Since(p.start))
	}
}

func (p *progress) done() {
	if p.observe != nil && p.deltas > 0 {
		p.observe(p.chars, p.deltas, time.Since(p.start))
	}
}

// StreamObserver hears a streamed reply grow: characters and text-carrying chunks so far.
type StreamObserver func(chars, deltas int, elapsed time.Duration)

// PromptObserver hears the server read the prompt: tokens read so far of total, as the server
// counts them.
type PromptObserver func(processed, total int, elapsed time.Duration)

// wirePromptProgress is llama-server's report of its prompt processing in a stream chunk, sent
// when the request asks return_progress: the prompt's tokens (total), those it found in its cache
// and those read so far, cache included.
type wirePromptProgress struct {
	Total     float64 `json:"total"`
	Cache     float64 `json:"cache"`
	Processed float64 `json:"processed"`
}

// promptProgress is a dialect whose server reports, in a stream, how far it read the prompt once
// the request sets this field true.
type promptProgress interface {
	promptProgressField() string
}
