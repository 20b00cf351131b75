package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

const systemPrompt = `You are a careful software engineer working in a git checkout of a repository. Do the task with the tools: read_file, list_dir, grep to look; edit_file (one exact search text, found once, replaced) and write_file to change files; run_verify to run the check that judges your work; finish when the task is done. Read a file before you change it. Paths are relative to the repository root. There is no shell. Keep changes to what the task asks. Always answer with a tool call.`

func firstMessages(task, verify string) []client.Message {
	return []client.Message{
		{Role: "system", Content: systemPrompt},
		{Role: "user", Content: fmt.Sprintf("Task: %s\n\nWhen you call finish, this command judges the work (exit 0 passes): %s", strings.TrimSpace(task), verify)},
	}
}

func toolBytes() int {
	data, _ := json.Marshal(Tools)
	return len(data)
}

// size is what a request's messages weigh against the input budget.
func size(msgs []client.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
		for _, tc := range m.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments)
		}
	}
	return n
}

// bytesPerToken is a floor on how many bytes a token carries for code and English; estimating
// with it errs toward folding early rather than letting the server truncate the prompt (Ollama
// truncates silently).
const bytesPerToken = 3

// conversation is the message list and the limits it lives under.
type conversation struct {
	msgs []client.Message
	// folds holds, for each tool message, its one-line summary; a folded message's content is
	// replaced by it once and never touched again.
	folds map[int]string
	limit int // bytes a request may carry
	// window is the model's loaded context in tokens when it, not the input budget, sets limit;
	// 0 when the budget does.
	window    int64
	turns     int
	maxTurns  int
	stall     int
	rounds    int
	maxTokens int64
	effort    string
	in, out   *int64
}

func newConversation(s *packs.Settings, window int64) *conversation {
	c := &conversation{folds: map[int]string{}, maxTurns: int(s.Int(packs.MaxTurns)), stall: int(s.Int(packs.StallTurns)),
		rounds: int(s.Int(packs.VerifyRounds)), maxTokens: s.Int(packs.MaxOutputTokens), effort: s.String(packs.Effort)}
	c.limit = int(s.Int(packs.MaxInputBytes)) - toolBytes()
	if window > 0 {
		// The reply needs room in the window too: at most half of it, so a small window still
		// leaves the prompt the other half; max_tokens is lowered to match.
		c.maxTokens = min(c.maxTokens, window/2)
		if w := int(window-c.maxTokens)*bytesPerToken - toolBytes(); w < c.limit {
			c.limit, c.window = w, window
		}
	}
	return c
}

// MaxCallsPerTurn is the most tool calls one reply runs.
const MaxCallsPerTurn = 16

func (c *conversation) add(u client.Usage) {
	for _, p := range []struct {
		dst **int64
		v   *int64
	}{{&c.in, u.In}, {&c.out, u.Out}} {
		switch {
		case p.v == nil:
		case *p.dst == nil:
			v := *p.v
			*p.dst = &v
		default:
			**p.dst += *p.v
		}
	}
}

// fit keeps the next request within the limit. It folds only when it must, and then folds the
// oldest tool results down to half the limit at once: every fold changes the prompt's prefix and
// so throws away the server's prompt cache, so it should happen rarely, not every turn.
//
// The results of the latest turn are never folded: the model asked for them and has not seen them.
func (c *conversation) fit(emit func(engine.Event)) error {
	before := size(c.msgs)
	if before <= c.limit {
		return nil
	}
	latest := len(c.msgs)
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if c.msgs[i].Role == "assistant" {
			latest = i
			break
		}
	}
	folded := 0
	for i := range c.msgs[:latest] {
		if size(c.msgs) <= c.limit/2 {
			break
		}
		line, ok := c.folds[i]
		if !ok || line == "" {
			continue
		}
		c.msgs[i].Content = line
		c.folds[i] = ""
		folded++
	}
	after := size(c.msgs)
	emit(engine.FoldEvent{Turn: c.turns, Folded: folded, BeforeBytes: before, AfterBytes: after, LimitBytes: c.limit})
	if after > c.limit {
		if c.window > 0 {
			return red(StatusContextExhausted, "the conversation needs %d bytes, over the %d that the model's %d-token loaded context leaves beside %d tokens kept for the reply, even with every old tool result folded; split the task or load the model with a larger context on the server", after, c.limit, c.window, c.maxTokens)
		}
		return red(StatusContextExhausted, "the conversation needs %d bytes, over the input budget's %d, even with every old tool result folded; split the task or raise {max_input_bytes}", after, c.limit)
	}
	return nil
}

// loop is the tool loop, the verify gate and its fix rounds, and the commit.
func (a *agent) loop(ctx context.Context, r *engine.Run) error {
	c := a.conv
	c.msgs = firstMessages(a.opts.Task, a.opts.Verify)
	lastChange := 0
	seen := map[string]bool{} // calls made since the worktree last changed
	malformed := 0
	nudged := false
	verifyRound := 0
	defer func() { a.d.Usage = engine.AgentUsage{InTokens: c.in, OutTokens: c.out} }()
	for {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if c.turns >= c.maxTurns {
			return red(StatusMaxTurns, "the model used all %d turns ({max_turns}) without finishing", c.maxTurns)
		}
		if c.turns-lastChange >= c.stall {
			return red(StatusStalled, "%d turns in a row changed nothing ({stall_turns})", c.turns-lastChange)
		}
		if err := c.fit(r.Emit); err != nil {
			return err
		}
		c.turns++
		a.d.Turns = c.turns
		res, err := r.Chat(ctx, "turn", client.ChatRequest{Model: r.Spec.Model, Messages: c.msgs, MaxTokens: c.maxTokens, Effort: c.effort, Tools: Tools})
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		// A reply that is not an answer is the loop's to handle (a nudge); any other error (the
		// server, the transport, a prompt the server would cut) ends the run.
		var reply *rails.ReplyError
		if err != nil && !errors.As(err, &reply) || res == nil {
			return err
		}
		c.add(res.Usage)
		calls, parsed := res.ToolCalls, false
		if len(calls) == 0 && res.Class == rails.ClassAnswer {
			calls, parsed = ParseTextCalls(res.Answer)
		}
		r.Emit(engine.AssistantEvent{Turn: c.turns, Class: string(res.Class), Content: capText(res.Answer, 16<<10),
			ToolCalls: len(calls), TextCalls: parsed})
		if len(calls) == 0 || res.Class == rails.ClassTruncated || res.Class == rails.ClassLostToThinking || res.Class == rails.ClassMalformed {
			reason, nudge := classNudge(res)
			if nudged {
				return modelError(res.Class, "the model again gave no usable tool call after a nudge ("+reason+")")
			}
			nudged = true
			r.Emit(engine.NudgeEvent{Turn: c.turns, Reason: reason})
			r.Observe(engine.ProgressEvent{Stage: engine.StageTurn, Step: "loop", Attempt: c.turns, What: c.turnWords("no tool call (" + reason + "); asked again")})
			if strings.TrimSpace(res.Answer) != "" {
				c.msgs = append(c.msgs, client.Message{Role: "assistant", Content: res.Answer})
			}
			c.msgs = append(c.msgs, client.Message{Role: "user", Content: nudge})
			continue
		}
		nudged = false
		dropped := 0
		if len(calls) > MaxCallsPerTurn {
			// A reply can hold any number of calls; each costs a tool run and a message, so a
			// turn runs the first MaxCallsPerTurn and tells the model the rest did not run.
			dropped = len(calls) - MaxCallsPerTurn
			calls = calls[:MaxCallsPerTurn]
			r.Emit(engine.ToolCallsDroppedEvent{Turn: c.turns, Ran: MaxCallsPerTurn, Dropped: dropped})
		}
		for i := range calls {
			if calls[i].ID == "" {
				// llama-server sends empty ids; the results must still name their call.
				calls[i].ID = fmt.Sprintf("call_%d_%d", c.turns, i+1)
			}
		}
		r.Observe(engine.ProgressEvent{Stage: engine.StageTurn, Step: "loop", Attempt: c.turns, What: c.turnWords(callsWords(calls))})
		content := res.Answer
		if parsed {
			content = ""
		}
		c.msgs = append(c.msgs, client.Message{Role: "assistant", Content: content, ToolCalls: calls})
		finished, summary := false, ""
		for _, tc := range calls {
			r.Emit(engine.ToolCallEvent{Turn: c.turns, ID: tc.ID, Name: tc.Name, Arguments: capText(tc.Arguments, 4<<10)})
			progress(r, c.turns, tc)
			out, fold, changed, done, err := a.call(ctx, r, tc, seen)
			if ctxErr := ctx.Err(); ctxErr != nil {
				return context.Cause(ctx)
			}
			if a.settleErr != nil {
				return a.settleErr
			}
			var me *MalformedError
			switch {
			case errors.As(err, &me):
				malformed++
			default:
				malformed = 0
			}
			if malformed >= 3 {
				c.msgs = append(c.msgs, client.Message{Role: "tool", ToolCallID: tc.ID, Content: out})
				return modelError(rails.ClassMalformed, "three malformed tool calls in a row, the last: "+me.Reason)
			}
			if changed {
				a.writes++
				lastChange = c.turns
				clear(seen)
			}
			c.folds[len(c.msgs)] = fold
			c.msgs = append(c.msgs, client.Message{Role: "tool", ToolCallID: tc.ID, Content: out})
			if done {
				finished, summary = true, finishSummary(tc)
			}
		}
		if dropped > 0 && !finished {
			c.msgs = append(c.msgs, client.Message{Role: "user", Content: fmt.Sprintf(
				"Only your first %d tool calls ran; the other %d did not. Make at most %d tool calls in one reply.", MaxCallsPerTurn, dropped, MaxCallsPerTurn)})
		}
		if !finished {
			continue
		}
		a.d.Summary = new(summary)
		verifyRound++
		vr, err := a.gate(ctx, r, verifyRound)
		if err != nil {
			return err
		}
		tail := strings.TrimRight(string(vr.Output), "\n")
		switch {
		case vr.Canceled:
			return context.Cause(ctx)
		case vr.Exited && vr.ExitCode == 0:
			if err := a.commit(ctx, r, summary); err != nil {
				return err
			}
			a.status = StatusCompleted
			return nil
		case vr.Exited && vr.ExitCode == 1:
			if verifyRound > c.rounds {
				return red(StatusVerifyFailed, "the verify command still exits 1 after %d fix rounds ({verify_rounds})\n%s", c.rounds, engine.IndentTail(tail, 10))
			}
			lastChange = c.turns
			clear(seen)
			c.msgs = append(c.msgs, client.Message{Role: "user", Content: fmt.Sprintf(
				"You called finish, but the verify command `%s` exited 1. The end of its output:\n```\n%s\n```\nFix the work, then call finish again. (Fix round %d of %d.)", a.opts.Verify, tail, verifyRound, c.rounds)})
		default:
			return &engine.NoVerdictError{Command: a.opts.Verify, Verdict: vr.Verdict(), Tail: string(vr.Output)}
		}
	}
}

// call runs one tool call under the guardrails. It returns the text the model gets, the one-line
// summary that replaces it if the conversation must fold, whether the worktree changed, and
// whether the call was finish.
func (a *agent) call(ctx context.Context, r *engine.Run, tc client.ToolCall, seen map[string]bool) (out, fold string, changed, done bool, err error) {
	defer func() {
		ok := err == nil
		if err != nil {
			out = "error: " + err.Error()
		}
		var be *BlockError
		if errors.As(err, &be) {
			out = "refused: " + be.Reason
			r.Emit(engine.GuardrailBlockEvent{Turn: a.conv.turns, ID: tc.ID, Name: tc.Name, Rule: be.Rule, Reason: be.Reason})
		}
		if len(out) > maxResult {
			out = out[:maxResult] + "\n[cut]"
		}
		if fold == "" {
			fold = fmt.Sprintf("[folded: %s %s, %d bytes]", tc.Name, capText(oneLine(tc.Arguments), 120), len(out))
		}
		r.Emit(engine.ToolResultEvent{Turn: a.conv.turns, ID: tc.ID, Name: tc.Name, OK: ok, Bytes: len(out), Changed: changed, Result: capText(out, 4<<10)})
	}()
	args, err := ParseArgs(tc.Name, tc.Arguments)
	if err != nil {
		return "", "", false, false, err
	}
	if tc.Name == "finish" {
		return "finishing: the verify command runs now", "", false, true, nil
	}
	key := tc.Name + " " + canonical(args)
	if seen[key] {
		return "", "", false, false, &BlockError{Rule: "repeat", Reason: "you made this exact call already and nothing has changed since, so its result is the same; do something else, or call finish"}
	}
	seen[key] = true
	out, changed, err = a.ws.run(ctx, tc.Name, args)
	return out, "", changed, false, err
}

// summary of a finish call.
func finishSummary(tc client.ToolCall) string {
	a, err := ParseArgs(tc.Name, tc.Arguments)
	if err != nil {
		return ""
	}
	return a.str("summary")
}

// progress tells a person at a terminal what the run is doing, one line per call: a run takes
// minutes, and the receipt comes only at the end.
func progress(r *engine.Run, turn int, tc client.ToolCall) {
	if w := r.Spec.Progress; w != nil {
		fmt.Fprintf(w, "agent: turn %d: %s\n", turn, callWords(tc))
	}
}

// callWords is what a tool call does, in a few words: its name and the path or pattern it names,
// which are the model's text: escaped.
func callWords(tc client.ToolCall) string {
	what := ""
	if a, err := ParseArgs(tc.Name, tc.Arguments); err == nil {
		what = a.str("path")
		if p := a.str("pattern"); p != "" {
			what = p + " " + what
		}
	}
	return strings.TrimSpace(untrusted.Escape(tc.Name) + " " + untrusted.Escape(capText(strings.TrimSpace(what), 80)))
}

// shownCalls is how many of a turn's calls its progress names; the rest it counts.
const shownCalls = 3

// callsWords are a turn's calls in a few words each, the first shownCalls of them.
func callsWords(calls []client.ToolCall) string {
	words := make([]string, 0, shownCalls)
	for _, tc := range calls[:min(len(calls), shownCalls)] {
		words = append(words, callWords(tc))
	}
	line := strings.Join(words, ", ")
	if more := len(calls) - shownCalls; more > 0 {
		line += fmt.Sprintf(" and %d more", more)
	}
	return line
}

// turnWords says what the latest turn did, for its progress event.
func (c *conversation) turnWords(did string) string {
	return fmt.Sprintf("turn %d of %d: %s", c.turns, c.maxTurns, did)
}

func canonical(a args) string {
	data, _ := json.Marshal(a)
	return string(data)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// classNudge names what was wrong with a reply that carried no tool call, and the one short
// message that asks again.
func classNudge(res *client.ChatResult) (string, string) {
	const ask = "Answer with a tool call (read_file, list_dir, grep, edit_file, write_file, run_verify), or call finish when the task is done."
	switch res.Class {
	case rails.ClassTruncated:
		return "truncated", "Your reply was cut off at the output token limit. Make smaller calls: edit_file with a short search text rather than write_file with a whole file. " + ask
	case rails.ClassLostToThinking, rails.ClassThinkOnly:
		return string(res.Class), "You only thought and made no call. " + ask
	case rails.ClassEmpty:
		return "empty", "Your reply was empty. " + ask
	case rails.ClassMalformed:
		return "malformed", "Your reply could not be read. " + ask
	}
	return "text", "You answered in text; nothing was done. " + ask
}

func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "...[cut]"
}
