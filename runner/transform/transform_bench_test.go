package transform

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/runner/scripted"
)

// goFile is a 400-line Go file: 100 small functions.
func goFile() scope.Text {
	var b strings.Builder
	b.WriteString("package big\n\n")
	for i := 0; len(strings.Split(b.String(), "\n")) < 400; i++ {
		fmt.Fprintf(&b, "func F%03d(x int) int {\n\treturn x + %d\n}\n\n", i, i)
	}
	lines := strings.Split(b.String(), "\n")[:400]
	return scope.SplitText(strings.Join(lines, "\n") + "\n")
}

// BenchmarkEditReplySize measures a 10-line change in a 400-line file made by two real transforms
// against the scripted server: one given the 10-line span (locum's span format), one given the whole
// file as its span. It counts the bytes of the request locum sent and of the streamed reply the
// server returned for each, and checks both leave the same file. Tokens are estimated at 4 bytes each.
func BenchmarkEditReplySize(b *testing.B) {
	text := goFile()
	start, n := 201, 10
	edited := text.Replace(start, start+n-1, func() []string {
		out := append([]string(nil), text.Lines[start-1:start-1+n]...)
		for i := range out {
			out[i] = strings.ReplaceAll(out[i], "x +", "x -")
		}
		return out
	}())
	spanReply := "```go\n" + strings.Join(edited.Lines[start-1:start-1+n], "\n") + "\n```"
	wholeReply := "```go\n" + strings.Join(edited.Lines, "\n") + "\n```"

	// run makes the edit once through the engine and returns the bytes sent and received.
	run := func(lines, reply string) (sent, received int) {
		s := scripted.New()
		defer s.Close()
		if err := s.Mimic("lmstudio"); err != nil {
			b.Fatal(err)
		}
		s.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &reply})
		root := b.TempDir()
		file := filepath.Join(root, "big.go")
		if err := os.WriteFile(file, []byte(text.Join()), 0o644); err != nil {
			b.Fatal(err)
		}
		spec := engine.RunSpec{Mode: "transform", Root: root, Settings: runtest.SettingsFor(b, s.BaseURL()), Model: runtest.Model, Routing: "operator",
			JournalPath: filepath.Join(root, "run.jsonl")}
		res := engine.Execute(context.Background(), spec, Steps(Options{File: "big.go", Lines: lines, Verify: "true",
			Task: "make every function in the span subtract instead of add", Cwd: root, Root: root}))
		if res.Error != nil {
			b.Fatalf("%s: %+v", lines, res.Error)
		}
		got, err := os.ReadFile(file)
		if err != nil || string(got) != edited.Join() {
			b.Fatalf("%s: the edit is not the one scripted (%v)", lines, err)
		}
		reqs := s.RequestsTo("/v1/chat/completions")
		if len(reqs) != 1 {
			b.Fatalf("%s: %d chat requests", lines, len(reqs))
		}
		return len(reqs[0].Body), len(scripted.ChatStream(reply))
	}
	var spanSent, spanGot, wholeSent, wholeGot int
	for range b.N {
		spanSent, spanGot = run(fmt.Sprintf("%d-%d", start, start+n-1), spanReply)
		wholeSent, wholeGot = run("1-", wholeReply)
	}
	b.ReportMetric(float64(len(spanReply))/4, "span-reply-est-tokens")
	b.ReportMetric(float64(len(wholeReply))/4, "whole-reply-est-tokens")
	b.ReportMetric(float64(wholeGot)/float64(spanGot), "whole/span-reply-bytes")
	b.ReportMetric(float64(wholeSent)/float64(spanSent), "whole/span-request-bytes")
	b.ReportMetric(float64(spanSent), "span-request-bytes")
	b.ReportMetric(float64(wholeSent), "whole-request-bytes")
}

// BenchmarkPromptOverhead measures the bytes locum adds around the user's text (task, span and
// context lines): the instruction, the labels and the fences.
func BenchmarkPromptOverhead(b *testing.B) {
	text := goFile()
	task := "make every function in the span subtract instead of add"
	tr := &transform{opts: Options{Task: task}, display: "big/big.go", text: text, start: 201, n: 10}
	var msgs []client.Message
	for range b.N {
		msgs = tr.prompt("span", "")
	}
	user := len(task)
	for _, l := range text.Lines[200-ContextLines : 210+ContextLines] {
		user += len(l) + 1
	}
	total := scope.PromptBytes(msgs)
	b.ReportMetric(float64(total), "prompt-bytes")
	b.ReportMetric(float64(total-user), "locum-added-bytes")
	b.ReportMetric(float64(len(spanInstruction)), "instruction-bytes")
}
