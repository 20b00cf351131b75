package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/dedup"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/transform"
)

// offlineBase is a loopback endpoint nothing is sent to: the checks' transport is a replay.
const offlineBase = "http://127.0.0.1:9/v1"

func modeSettings(mode string, flags map[string]string) (*packs.Settings, error) {
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	if err != nil {
		return nil, err
	}
	all := map[string]string{"base-url": offlineBase}
	for k, v := range flags {
		all[k] = v
	}
	return (&packs.Composition{Packs: []*packs.Pack{p}}).Resolve(mode, nil, all)
}

// scratchRepo is a temporary repository root with a git directory, removed by the returned func.
func scratchRepo() (string, func(), error) {
	dir, err := os.MkdirTemp("", "locum-offline-")
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

func couldNot(err error) error { return &CouldNotRunError{Err: err} }

// ---- loopback

var offLoopback = []string{
	"http://127.0.0.1@example.com/v1", "http://localhost.example.com/v1", "http://0.0.0.0:1234/v1",
	"http://[::ffff:127.0.0.1]:1234/v1", "http://2130706433/v1", "http://127.1/v1", "http://10.0.0.1:1234/v1",
	"http://example.com/v1", "ftp://127.0.0.1/v1", "file:///etc/passwd", "http://user@127.0.0.1/v1",
}

func loopbackChecks() []Check {
	return []Check{
		{Name: "loopback/off-loopback-spellings-refused", Run: func(_ context.Context, env *Env) error {
			for _, raw := range offLoopback {
				_, err := env.Rails.ParseEndpoint(raw, false)
				var ee *rails.EndpointError
				if !errors.As(err, &ee) {
					return fmt.Errorf("%s was not refused", raw)
				}
			}
			return nil
		}},
		{Name: "loopback/loopback-spellings-accepted", Run: func(_ context.Context, env *Env) error {
			for _, raw := range []string{"http://127.0.0.1:1234/v1", "http://127.9.9.9/v1", "http://localhost:11434/v1", "http://[::1]:8080/v1", "HTTP://LOCALHOST.:1234/v1"} {
				if _, err := env.Rails.ParseEndpoint(raw, false); err != nil {
					return fmt.Errorf("%s was refused: %v", raw, err)
				}
			}
			return nil
		}},
		{Name: "loopback/allow-remote-is-the-only-way-out", Run: func(_ context.Context, env *Env) error {
			if _, err := env.Rails.ParseEndpoint("http://example.com:8080/v1", false); err == nil {
				return errors.New("a remote endpoint passed without --allow-remote")
			}
			if _, err := env.Rails.ParseEndpoint("http://example.com:8080/v1", true); err != nil {
				return fmt.Errorf("--allow-remote did not pass a remote endpoint: %v", err)
			}
			return nil
		}},
		{Name: "loopback/dial-time-check-on-the-resolved-address", Run: func(_ context.Context, env *Env) error {
			for addr, ok := range map[string]bool{"127.0.0.1:1234": true, "[::1]:1234": true, "192.0.2.1:443": false, "[::ffff:192.0.2.1]:80": false, "0.0.0.0:80": false} {
				if err := env.Rails.CheckDialAddress(addr); (err == nil) != ok {
					return fmt.Errorf("%s: dial-time check said %v", addr, err)
				}
			}
			return nil
		}},
		{Name: "loopback/refused-before-any-request", Run: func(ctx context.Context, env *Env) error {
			rp := newReplay().mimic("lmstudio")
			res, err := runTransform(ctx, env, rp, "exit 0", map[string]string{"base-url": "http://10.9.8.7:1234/v1"})
			if err != nil {
				return couldNot(err)
			}
			if res.Status != engine.StatusRefused || rp.requests() != 0 {
				return fmt.Errorf("an off-loopback endpoint ended %s after %d requests", res.Status, rp.requests())
			}
			return nil
		}},
	}
}

// ---- input budget

func budgetChecks() []Check {
	return []Check{
		{Name: "budget/oversized-prompt-refused-before-any-request", Run: func(ctx context.Context, env *Env) error {
			rp := newReplay().mimic("lmstudio")
			res, err := runTransform(ctx, env, rp, "exit 0", map[string]string{"max-input-bytes": "64"})
			if err != nil {
				return couldNot(err)
			}
			if res.Status != engine.StatusRefused || res.Error == nil || res.Error.Kind != "input_budget" || res.ExitCode != 1 {
				return fmt.Errorf("an oversized prompt ended %s (%v)", res.Status, res.Error)
			}
			if rp.requests() != 0 {
				return fmt.Errorf("%d requests were sent before the refusal", rp.requests())
			}
			return nil
		}},
		{Name: "budget/prompt-over-the-loaded-context-refused-before-the-request", Run: func(ctx context.Context, env *Env) error {
			// m has 32768 tokens loaded; the prompt and room for 32768 more cannot fit.
			rp := newReplay().mimic("lmstudio")
			res, err := runTransform(ctx, env, rp, "exit 0", map[string]string{"max-output-tokens": "32768"})
			if err != nil {
				return couldNot(err)
			}
			if res.Status != engine.StatusRefused || res.Error == nil || res.Error.Kind != "context_window" || res.ExitCode != 1 {
				return fmt.Errorf("a prompt over the loaded context ended %s (%v)", res.Status, res.Error)
			}
			if len(rp.chatBodies()) != 0 {
				return fmt.Errorf("%d chat requests were sent before the refusal", len(rp.chatBodies()))
			}
			return nil
		}},
		{Name: "budget/non-integer-ceiling-is-exit-2", Run: func(context.Context, *Env) error {
			for _, v := range []string{"32k", "1.5", "-1", "0", "", "1e3"} {
				_, err := modeSettings("transform", map[string]string{"max-input-bytes": v})
				if _, _, code := engine.Classify(err); err == nil || code != 2 {
					return fmt.Errorf("--max-input-bytes %q gave %v (exit %d), want a refusal with exit 2", v, err, code)
				}
			}
			return nil
		}},
	}
}

// ---- thinking cap and reply classes

func thinkingChecks() []Check {
	return []Check{
		{Name: "thinking/each-server-gets-its-switch-and-max-tokens", Run: checkSwitches},
		{Name: "thinking/reply-classes-from-recorded-bodies", Run: checkReplyClasses},
	}
}

func offlineClient(env *Env, rp *replay) *client.Client {
	u, _ := rails.ParseEndpoint(offlineBase, false)
	return client.New(client.Config{BaseURL: u, Dial: env.Dial, Transport: rp})
}

func checkSwitches(ctx context.Context, env *Env) error {
	answer := jsonReply(`{"choices":[{"finish_reason":"stop","message":{"content":"ok"}}]}`)
	noKwargs := map[string]any{"enable_thinking": false}
	cases := []struct {
		name, kind, show string
		want             map[string]any
		absent           []string
	}{
		{"ollama, a model without thinking", "ollama", `{"capabilities":["completion"]}`, nil, []string{"reasoning_effort", "chat_template_kwargs"}},
		{"ollama, an on/off thinker", "ollama", `{"capabilities":["completion","thinking"]}`, map[string]any{"reasoning_effort": "none"}, nil},
		{"llama-server", "llama-server", "", map[string]any{"chat_template_kwargs": noKwargs}, []string{"reasoning_effort"}},
		{"LM Studio", "lmstudio", "", map[string]any{"reasoning_effort": "low", "enable_thinking": false}, nil},
		{"vLLM", "vllm", "", map[string]any{"reasoning_effort": "low", "chat_template_kwargs": noKwargs}, nil},
	}
	for _, c := range cases {
		rp := newReplay().mimic(c.kind).on("POST", "/v1/chat/completions", answer)
		if c.show != "" {
			rp.on("POST", "/api/show", jsonReply(c.show))
		}
		if _, err := offlineClient(env, rp).Chat(ctx, client.ChatRequest{Model: "m", MaxTokens: 4096, Effort: "low",
			Messages: []client.Message{{Role: "user", Content: "hi"}}}); err != nil {
			return fmt.Errorf("%s: %v", c.name, err)
		}
		body := rp.lastBody()
		if n, _ := body["max_tokens"].(float64); n != 4096 {
			return fmt.Errorf("%s: max_tokens is %v, want 4096", c.name, body["max_tokens"])
		}
		for k, v := range c.want {
			if fmt.Sprint(body[k]) != fmt.Sprint(v) {
				return fmt.Errorf("%s: %s is %v, want %v", c.name, k, body[k], v)
			}
		}
		for _, k := range c.absent {
			if _, ok := body[k]; ok {
				return fmt.Errorf("%s: %s was sent, and this server refuses it", c.name, k)
			}
		}
	}
	return nil
}

func checkReplyClasses(ctx context.Context, env *Env) error {
	cases := []struct {
		name   string
		kind   string
		reply  reply
		stream bool
		want   rails.ReplyClass
	}{
		{"llama-server, cut off at max_tokens", "llama-server", jsonReply(string(recorded("llama-server-chat-truncated.json"))), false, rails.ClassTruncated},
		{"llama-server stream, cut off", "llama-server", reply{status: 200, stream: true, body: recorded("llama-server-stream-truncated.sse")}, true, rails.ClassTruncated},
		{"Ollama thinker, all in reasoning", "ollama", jsonReply(string(recorded("ollama-think-chat-lost.json"))), false, rails.ClassLostToThinking},
		{"Ollama thinker stream, all in reasoning", "ollama", reply{status: 200, stream: true, body: recorded("ollama-think-stream-lost.sse")}, true, rails.ClassLostToThinking},
		{"an answer after a think block", "lmstudio", jsonReply(`{"choices":[{"finish_reason":"stop","message":{"content":"<think>x</think>done"}}]}`), false, rails.ClassAnswer},
		{"thinking and no answer", "vllm", jsonReply(`{"choices":[{"finish_reason":"stop","message":{"content":"","reasoning_content":"x"}}]}`), false, rails.ClassThinkOnly},
		{"nothing", "lmstudio", jsonReply(`{"choices":[{"finish_reason":"stop","message":{"content":""}}]}`), false, rails.ClassEmpty},
		{"not a completion", "lmstudio", jsonReply(`{"object":"error"}`), false, rails.ClassMalformed},
	}
	for _, c := range cases {
		rp := newReplay().mimic(c.kind).on("POST", "/v1/chat/completions", c.reply).on("POST", "/api/show", jsonReply(`{"capabilities":["completion","thinking"]}`))
		res, err := offlineClient(env, rp).Chat(ctx, client.ChatRequest{Model: "m", MaxTokens: 48, Effort: "none", Stream: c.stream,
			Messages: []client.Message{{Role: "user", Content: "hi"}}})
		if res == nil {
			return fmt.Errorf("%s: %v", c.name, err)
		}
		if res.Class != c.want {
			return fmt.Errorf("%s: classified %s, want %s", c.name, res.Class, c.want)
		}
		var re *rails.ReplyError
		if (c.want == rails.ClassAnswer) != (err == nil) || (err != nil && !errors.As(err, &re)) {
			return fmt.Errorf("%s: a %s reply came back with error %v", c.name, c.want, err)
		}
	}
	return nil
}

// ---- rollback

const rollbackOriginal = "package calc\r\n\r\nfunc Add(a, b int) int {\r\n\treturn a - b\r\n}\r\n"

// runTransform runs a whole transform on a scratch file with the replayed model and the given
// verify command, and checks nothing else; the caller judges the result and the file.
func runTransform(ctx context.Context, env *Env, rp *replay, verifyCmd string, flags map[string]string) (*engine.Result, error) {
	res, _, _, err := transformOnScratch(ctx, env, rp, verifyCmd, flags)
	return res, err
}

func transformOnScratch(ctx context.Context, env *Env, rp *replay, verifyCmd string, flags map[string]string) (*engine.Result, []byte, os.FileMode, error) {
	root, cleanup, err := scratchRepo()
	if err != nil {
		return nil, nil, 0, err
	}
	defer cleanup()
	file := filepath.Join(root, "calc.go")
	if err := os.WriteFile(file, []byte(rollbackOriginal), 0o640); err != nil {
		return nil, nil, 0, err
	}
	if err := os.Chmod(file, 0o751); err != nil {
		return nil, nil, 0, err
	}
	settings, err := modeSettings("transform", flags)
	if err != nil {
		return nil, nil, 0, err
	}
	spec := engine.RunSpec{Mode: "transform", Root: root, Settings: settings, Model: "m", Routing: "operator",
		JournalPath: filepath.Join(root, ".git", "journal.jsonl"), Dial: env.Dial, Transport: rp}
	res := engine.Execute(ctx, spec, transform.Steps(transform.Options{File: "calc.go", Verify: verifyCmd, Task: "make Add add", Cwd: root, Root: root}))
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, 0, err
	}
	st, err := os.Stat(file)
	if err != nil {
		return nil, nil, 0, err
	}
	return res, data, st.Mode().Perm(), nil
}

func rollbackChecks() []Check {
	edit := jsonReply(`{"choices":[{"finish_reason":"stop","message":{"content":"` + "```go\\npackage calc\\n\\nfunc Add(a, b int) int {\\n\\treturn a * b\\n}\\n```" + `"}}]}`)
	restores := func(name, verifyCmd string, wantStatus engine.Status) Check {
		return Check{Name: name, Run: func(ctx context.Context, env *Env) error {
			rp := newReplay().mimic("lmstudio").on("POST", "/v1/chat/completions", edit)
			res, data, mode, err := transformOnScratch(ctx, env, rp, verifyCmd, map[string]string{"max-attempts": "1"})
			if err != nil {
				return couldNot(err)
			}
			if res.Status != wantStatus {
				return fmt.Errorf("the run ended %s (%v), want %s", res.Status, res.Error, wantStatus)
			}
			if !bytes.Equal(data, []byte(rollbackOriginal)) || mode != 0o751 {
				return fmt.Errorf("the file was not restored byte for byte with its mode (mode %#o)", mode)
			}
			return nil
		}}
	}
	return []Check{
		restores("rollback/verify-exit-1-restores", "exit 1", engine.StatusRed),
		restores("rollback/verify-exit-2-restores", "exit 2", engine.StatusError),
		restores("rollback/verify-exit-127-restores", "no-such-verify-command-locum", engine.StatusError),
		restores("rollback/verify-killed-by-a-signal-restores", "kill -9 $$", engine.StatusError),
		{Name: "rollback/crash-record-restores-after-a-crash", Run: checkCrashRecord},
	}
}

func checkCrashRecord(context.Context, *Env) error {
	root, cleanup, err := scratchRepo()
	if err != nil {
		return couldNot(err)
	}
	defer cleanup()
	file := filepath.Join(root, "calc.go")
	if err := os.WriteFile(file, []byte(rollbackOriginal), 0o600); err != nil {
		return couldNot(err)
	}
	rb := rails.Rollback{Dir: transform.RollbackDir(root), Root: root, Key: checkKey()}
	g, err := rails.GuardFile(file, rb)
	if err != nil {
		return err
	}
	if err := g.Write([]byte("an edit a crash left behind\n")); err != nil {
		return err
	}
	g.Keep()
	done, err := rails.Recover(rb)
	if err != nil {
		return err
	}
	data, _ := os.ReadFile(file)
	st, _ := os.Stat(file)
	if len(done) != 1 || !bytes.Equal(data, []byte(rollbackOriginal)) || st.Mode().Perm() != 0o600 {
		return fmt.Errorf("after the simulated crash the file was not restored (%d restored)", len(done))
	}
	return nil
}

// ---- dedup

func dedupChecks() []Check {
	return []Check{
		{Name: "dedup/readme-left-out", Run: func(context.Context, *Env) error {
			root, cleanup, err := scratchRepo()
			if err != nil {
				return couldNot(err)
			}
			defer cleanup()
			for _, n := range []string{"README.md", "readme.MD", "a.md", "B.MD", "notes.txt"} {
				if err := os.WriteFile(filepath.Join(root, n), []byte("x\n"), 0o644); err != nil {
					return couldNot(err)
				}
			}
			if err := os.Mkdir(filepath.Join(root, "sub.md"), 0o755); err != nil {
				return couldNot(err)
			}
			got, err := dedup.Entries(root, "*.md")
			if err != nil {
				return err
			}
			if strings.Join(got, ",") != "B.MD,a.md" {
				return fmt.Errorf("entries %v, want [B.MD a.md]", got)
			}
			return nil
		}},
		{Name: "dedup/per-file-ceiling-refused-before-any-request", Run: func(ctx context.Context, env *Env) error {
			root, cleanup, err := scratchRepo()
			if err != nil {
				return couldNot(err)
			}
			defer cleanup()
			for n, size := range map[string]int{"big-1.md": 40, "big-2.md": 50, "small.md": 5} {
				if err := os.WriteFile(filepath.Join(root, n), bytes.Repeat([]byte("a"), size), 0o644); err != nil {
					return couldNot(err)
				}
			}
			settings, err := modeSettings("dedup", map[string]string{"max-input-bytes": "10"})
			if err != nil {
				return couldNot(err)
			}
			rp := newReplay()
			var found dedup.Result
			res := engine.Execute(ctx, engine.RunSpec{Mode: "dedup", Root: root, Settings: settings, Model: "e", JournalPath: filepath.Join(root, ".git", "j.jsonl"),
				Dial: env.Dial, Transport: rp}, dedup.Steps(dedup.Options{Dir: root, Root: root, NoCache: true}, &found))
			if res.Status != engine.StatusRefused || rp.requests() != 0 {
				return fmt.Errorf("oversized files ended %s after %d requests", res.Status, rp.requests())
			}
			if !strings.Contains(res.Error.Message, "big-1.md (40 bytes), big-2.md (50 bytes)") {
				return fmt.Errorf("the refusal does not name every file: %s", res.Error.Message)
			}
			return nil
		}},
		{Name: "dedup/threshold-is-a-plain-decimal-from-minus-1-to-1", Run: func(context.Context, *Env) error {
			for v, ok := range map[string]bool{"0.8": true, "-1": true, "1": true, "0": true, "1.5": false, "0.8x": false, "1e-1": false, "NaN": false, "": false, "-1.01": false} {
				_, err := modeSettings("dedup", map[string]string{"threshold": v})
				if (err == nil) != ok {
					return fmt.Errorf("--threshold %q: %v", v, err)
				}
			}
			return nil
		}},
		{Name: "dedup/zero-vector-scores-zero", Run: func(context.Context, *Env) error {
			pairs := dedup.SimilarPairs(dedup.Normalize([][]float64{{0, 0, 0}, {1, 2, 3}, {3, 2, 1}}), []string{"a", "b", "c"}, -1)
			for _, p := range pairs {
				if math.IsNaN(p.Score) || ((p.A == "a" || p.B == "a") && p.Score != 0) {
					return fmt.Errorf("pair %s %s scored %v", p.A, p.B, p.Score)
				}
			}
			if len(pairs) != 3 {
				return fmt.Errorf("%d pairs at threshold -1, want 3", len(pairs))
			}
			return nil
		}},
	}
}
