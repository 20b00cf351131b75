package transform

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/scope"
)

func TestSpanReplacement(t *testing.T) {
	cases := []struct {
		name, reply string
		want        []string
		err         string
	}{
		{"one block", "Here:\n```go\nfunc A() {}\n```\n", []string{"func A() {}"}, ""},
		{"tilde fence", "~~~\nx\n~~~", []string{"x"}, ""},
		{"longer fence holds backticks", "````md\n```go\ncode\n```\n````", []string{"```go", "code", "```"}, ""},
		{"crlf reply", "```\r\na\r\nb\r\n```\r\n", []string{"a", "b"}, ""},
		{"empty block deletes", "```\n```", nil, ""},
		{"a last empty line is kept", "```\na\n\n```", []string{"a", ""}, ""},
		{"no block", "just text", nil, "no fenced code block"},
		{"two blocks", "```\na\n```\n```\nb\n```", nil, "2 fenced code blocks"},
		{"unclosed", "```\na\n", nil, "not closed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SpanReplacement(tc.reply)
			if tc.err != "" {
				var ee *scope.EditError
				require.True(t, errors.As(err, &ee), "got %v", err)
				assert.Contains(t, ee.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestBlocks(t *testing.T) {
	span := []string{"func A() int {", "\treturn 1", "}", "func B() int {", "\treturn 1", "}"}
	reply := "Sure.\n<<<<<<< SEARCH\nfunc A() int {\n\treturn 1\n=======\nfunc A() int {\n\treturn 2\n>>>>>>> REPLACE\n"
	blocks, err := ParseBlocks(reply)
	require.NoError(t, err)
	got, err := ApplyBlocks(span, blocks)
	require.NoError(t, err)
	assert.Equal(t, "\treturn 2", got[1])
	assert.Equal(t, "\treturn 1", got[4])

	ambiguous := "<<<<<<< SEARCH\n\treturn 1\n=======\n\treturn 3\n>>>>>>> REPLACE"
	blocks, err = ParseBlocks(ambiguous)
	require.NoError(t, err)
	_, err = ApplyBlocks(span, blocks)
	assert.ErrorContains(t, err, "occurs 2 times")

	allOrNothing := reply + "<<<<<<< SEARCH\nnot there\n=======\nx\n>>>>>>> REPLACE\n"
	blocks, err = ParseBlocks(allOrNothing)
	require.NoError(t, err)
	_, err = ApplyBlocks(span, blocks)
	assert.ErrorContains(t, err, "block 2: the SEARCH text occurs nowhere")
	assert.Equal(t, "\treturn 1", span[1], "a failed block changes nothing")

	for reply, want := range map[string]string{
		"no blocks here":                              "no SEARCH/REPLACE block",
		"<<<<<<< SEARCH\na\n>>>>>>> REPLACE":          "no ======= line",
		"<<<<<<< SEARCH\na\n=======\nb\n":             "no >>>>>>> REPLACE",
		"<<<<<<< SEARCH\n=======\nb\n>>>>>>> REPLACE": "",
	} {
		blocks, err := ParseBlocks(reply)
		if want != "" {
			assert.ErrorContains(t, err, want, reply)
			continue
		}
		require.NoError(t, err)
		_, err = ApplyBlocks(span, blocks)
		assert.ErrorContains(t, err, "empty SEARCH")
	}
}

func TestDiffStat(t *testing.T) {
	a, r := DiffStat([]string{"a", "b", "c"}, []string{"a", "B", "c", "d"})
	assert.Equal(t, 2, a)
	assert.Equal(t, 1, r)
	a, r = DiffStat([]string{"x"}, []string{"x"})
	assert.Zero(t, a+r)
}

// An edit's written bytes are its changed lines, each run of them apart: an edit that touches
// lines 3 and 40 of a long span is two lines typed, not the 38 between.
func TestChangesCountOnlyTheChangedLines(t *testing.T) {
	var before []string
	for i := 1; i <= 45; i++ {
		before = append(before, fmt.Sprintf("line %02d", i))
	}
	after := slices.Clone(before)
	after[2], after[39] = "LINE 03", "LINE 40"
	c := Changes("f.txt", 10, before, after)
	assert.Equal(t, int64(2*8), c.Old, "the two old lines")
	assert.Equal(t, int64(2*8), c.New, "the two new lines")
	assert.Equal(t, "f.txt:12\n-line 03\n+LINE 03\nf.txt:49\n-line 40\n+LINE 40\n", c.Text)
	assert.False(t, c.Cut)
	a, r := DiffStat(before, after)
	assert.Equal(t, 2, a)
	assert.Equal(t, 2, r)

	// Past maxChangeLines the text stops and the host reads the diff: counted whole.
	rewritten := make([]string, len(before))
	for i := range before {
		rewritten[i] = strings.ToUpper(before[i])
	}
	c = Changes("f.txt", 1, before, rewritten)
	assert.True(t, c.Cut)
	assert.Contains(t, c.Text, "... 50 more changed lines: git diff -- f.txt\n")
	assert.Equal(t, int64(45*8), c.Old)

	// A span emptied, and one written into an empty span.
	c = Changes("f.txt", 1, []string{"a", "b"}, nil)
	assert.Equal(t, "f.txt:1\n-a\n-b\n", c.Text)
	c = Changes("f.txt", 7, nil, []string{"x"})
	assert.Equal(t, "f.txt:7\n+x\n", c.Text)
}

func TestInstructionsStayShort(t *testing.T) {
	assert.Less(t, len(spanInstruction), 1024)
	assert.Less(t, len(blocksInstruction), 1024)
	tr := &transform{opts: Options{Task: "t"}, display: "x.go", text: scope.SplitText(strings.Repeat("line\n", 20)), start: 5, n: 3}
	msgs := tr.prompt("span", "")
	assert.Contains(t, msgs[1].Content, "File: x.go (Go)")
	assert.Contains(t, msgs[1].Content, "The span, lines 5-7 of 20")
	assert.Contains(t, msgs[1].Content, "Context before the span")
	assert.Contains(t, msgs[1].Content, "Context after the span")
}

func FuzzSpanReplacement(f *testing.F) {
	f.Add("```go\nx\n```")
	f.Add("````\n```\n````")
	f.Add("~~~\n```\n~~~\n")
	f.Fuzz(func(t *testing.T, reply string) {
		lines, err := SpanReplacement(reply)
		if err == nil {
			for _, l := range lines {
				if strings.Contains(l, "\n") {
					t.Fatalf("a line holds a newline: %q", l)
				}
			}
		}
	})
}

func FuzzBlocks(f *testing.F) {
	f.Add("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE", "a\nc")
	f.Fuzz(func(t *testing.T, reply, span string) {
		blocks, err := ParseBlocks(reply)
		if err != nil {
			return
		}
		lines := strings.Split(span, "\n")
		before := strings.Join(lines, "\n")
		if _, err := ApplyBlocks(lines, blocks); err != nil && strings.Join(lines, "\n") != before {
			t.Fatal("a failed apply changed the span")
		}
	})
}
