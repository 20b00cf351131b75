package summarize

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/scope"
)

func TestGate(t *testing.T) {
	file := []string{"package x", "", "// Add sums two numbers.", "func Add(a, b int) int {", "\treturn a + b", "}"}
	span := scope.LineRange{Start: 3, End: 6}
	claims := []Claim{
		{Text: "Add sums.", Lines: [2]int{3, 5}, Quote: "Add  sums\ttwo numbers."},
		{Text: "Spans lines.", Lines: [2]int{4, 5}, Quote: "int {\n\treturn a + b"},
		{Text: "Outside.", Lines: [2]int{1, 3}, Quote: "package x"},
		{Text: "Inverted.", Lines: [2]int{5, 4}, Quote: "return"},
		{Text: "Absent.", Lines: [2]int{3, 6}, Quote: "a - b"},
		{Text: "No quote.", Lines: [2]int{3, 6}, Quote: "  "},
		{Text: "Claims itself.", Lines: [2]int{3, 3}, Quote: "verified", Verdict: "supported"},
		// A real model (Qwen2.5-Coder-1.5B) copied the instruction's example as its claim, with
		// a quote that is in the file: the gate must not call that supported.
		{Text: "One sentence.", Lines: [2]int{3, 3}, Quote: "// Add sums two numbers."},
		{Text: "  ", Lines: [2]int{3, 3}, Quote: "// Add sums two numbers."},
	}
	got := Gate(claims, file, span)
	want := []string{"supported", "supported", "unsupported", "unsupported", "unsupported", "unsupported", "unsupported", "unsupported", "unsupported"}
	for i := range got {
		assert.Equal(t, want[i], got[i].Verdict, claims[i].Text)
	}
	assert.Contains(t, got[2].Reason, "outside the span 3-6")
	assert.Contains(t, got[4].Reason, "not in lines 3-6")
	assert.Contains(t, got[7].Reason, "the instruction's example")
	assert.Equal(t, "no claim text", got[8].Reason)
}

func TestParseDigest(t *testing.T) {
	claims, err := ParseDigest("```json\n{\"digest\":[{\"text\":\"t\",\"lines\":[1,2],\"quote\":\"q\",\"verified\":true}]}\n```")
	require.NoError(t, err)
	assert.Equal(t, []Claim{{Text: "t", Lines: [2]int{1, 2}, Quote: "q"}}, claims)
	for reply, want := range map[string]string{
		"no json":                   "not a JSON object",
		`{"summary":1}`:             `no "digest" array`,
		`{"digest":[{"text":"t"}]}`: "lacks",
		`{"digest":[{"text":"t","lines":[1],"quote":"q"}]}`: "lacks",
		`{"digest":[{"text":1,"lines":[1,2],"quote":"q"}]}`: "is not {text, lines, quote}",
	} {
		_, err := ParseDigest(reply)
		assert.ErrorContains(t, err, want, reply)
	}
	claims, err = ParseDigest(`{"digest":[]}`)
	require.NoError(t, err)
	assert.Empty(t, claims)
}

// BenchmarkDigestBytes compares the bytes a caller reads from a digest with the bytes of the span
// it stands for: a 300-line Go file and a scripted ten-claim digest, every claim backed.
func BenchmarkDigestBytes(b *testing.B) {
	var lines []string
	for len(lines) < 300 {
		i := len(lines)
		lines = append(lines, fmt.Sprintf("// F%03d returns its argument plus %d, for the table in the design note.", i, i),
			fmt.Sprintf("func F%03d(x int) int {", i), fmt.Sprintf("\treturn x + %d", i), "}")
	}
	lines = lines[:300]
	var claims []Claim
	for k := 0; k < 10; k++ {
		a := 1 + k*30
		claims = append(claims, Claim{Text: fmt.Sprintf("Functions from line %d add a constant to their argument.", a), Lines: [2]int{a, a + 29}, Quote: strings.TrimSpace(lines[a])})
	}
	var gated []Claim
	for range b.N {
		gated = Gate(claims, lines, scope.LineRange{Start: 1, End: 300})
	}
	digest, span := 0, 0
	for _, c := range gated {
		if !c.Supported() {
			b.Fatalf("claim %q unsupported: %s", c.Text, c.Reason)
		}
		digest += len(fmt.Sprintf("L%d-%d %s\n", c.Lines[0], c.Lines[1], c.Text))
	}
	for _, l := range lines {
		span += len(l) + 1
	}
	b.ReportMetric(float64(digest), "digest-bytes")
	b.ReportMetric(float64(span), "span-bytes")
	b.ReportMetric(float64(span)/float64(digest), "span/digest")
}

// FuzzParseDigest feeds untrusted model replies to the digest parser and the gate: the gate's
// verdicts stay its own.
func FuzzParseDigest(f *testing.F) {
	f.Add(`{"digest":[{"text":"t","lines":[1,2],"quote":"a b","verdict":"supported"}]}`)
	f.Add("```json\n{\"digest\":[]}\n```")
	f.Fuzz(func(t *testing.T, reply string) {
		claims, err := ParseDigest(reply)
		if err != nil {
			return
		}
		file := []string{"a b", "c"}
		for _, c := range Gate(claims, file, scope.LineRange{Start: 1, End: 2}) {
			if c.Supported() && (c.Lines[0] < 1 || c.Lines[1] > 2 || c.Lines[0] > c.Lines[1]) {
				t.Fatalf("a claim outside the span was supported: %+v", c)
			}
		}
	})
}
