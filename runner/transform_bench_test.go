package runner

import (
	"fmt"
	"strings"
	"testing"
)

// goFile is a 400-line Go file: 100 small functions.
func goFile() Text {
	var b strings.Builder
	b.WriteString("package big\n\n")
	for i := 0; len(strings.Split(b.String(), "\n")) < 400; i++ {
		fmt.Fprintf(&b, "func F%03d(x int) int {\n\treturn x + %d\n}\n\n", i, i)
	}
	lines := strings.Split(b.String(), "\n")[:400]
	return SplitText(strings.Join(lines, "\n") + "\n")
}

// BenchmarkEditReplySize compares what the model must write for a 10-line change in a 400-line
// file: the span alone (locum's span format) against the whole file. Both replies are scripted;
// tokens are estimated at 4 bytes each, a usual rate for code.
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
	var spanOut, wholeOut []string
	for range b.N {
		var err error
		if spanOut, err = SpanReplacement(spanReply); err != nil {
			b.Fatal(err)
		}
		if wholeOut, err = SpanReplacement(wholeReply); err != nil {
			b.Fatal(err)
		}
	}
	if text.Replace(start, start+n-1, spanOut).Join() != text.Replace(1, len(text.Lines), wholeOut).Join() {
		b.Fatal("the two edits differ")
	}
	b.ReportMetric(float64(len(spanReply))/4, "span-est-tokens/edit")
	b.ReportMetric(float64(len(wholeReply))/4, "whole-file-est-tokens/edit")
	b.ReportMetric(float64(len(wholeReply))/float64(len(spanReply)), "whole/span")
}

// BenchmarkPromptOverhead measures the bytes locum adds around the user's text (task, span and
// context lines): the instruction, the labels and the fences.
func BenchmarkPromptOverhead(b *testing.B) {
	text := goFile()
	task := "make every function in the span subtract instead of add"
	tr := &transform{opts: TransformOptions{Task: task}, display: "big/big.go", text: text, start: 201, n: 10}
	var msgs []Message
	for range b.N {
		msgs = tr.prompt("span", "")
	}
	user := len(task)
	for _, l := range text.Lines[200-ContextLines : 210+ContextLines] {
		user += len(l) + 1
	}
	total := promptBytes(msgs)
	b.ReportMetric(float64(total), "prompt-bytes")
	b.ReportMetric(float64(total-user), "locum-added-bytes")
	b.ReportMetric(float64(len(spanInstruction)), "instruction-bytes")
}
