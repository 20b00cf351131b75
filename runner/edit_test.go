package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLineRange(t *testing.T) {
	cases := []struct {
		in      string
		want    LineRange
		wantErr string
	}{
		{"40-80", LineRange{40, 80}, ""},
		{"7", LineRange{7, 7}, ""},
		{"12-", LineRange{12, 0}, ""},
		{" 3-4 ", LineRange{3, 4}, ""},
		{"0-4", LineRange{}, "from 1"},
		{"-4", LineRange{}, "from 1"},
		{"5-3", LineRange{}, "inverted"},
		{"a-b", LineRange{}, "whole number"},
		{"3-b", LineRange{}, "last line"},
		{"+3-4", LineRange{}, "from 1"},
		{"", LineRange{}, "from 1"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseLineRange(tc.in)
			if tc.wantErr != "" {
				var bad *BadInputError
				require.True(t, errors.As(err, &bad), "got %v", err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	r, err := LineRange{Start: 3}.Within(10)
	require.NoError(t, err)
	assert.Equal(t, LineRange{3, 10}, r)
	_, err = LineRange{Start: 3, End: 11}.Within(10)
	assert.ErrorContains(t, err, "out of bounds: the file has 10 lines")
	_, err = LineRange{Start: 11}.Within(10)
	assert.Error(t, err)
}

func TestTextRoundTrips(t *testing.T) {
	for _, content := range []string{
		"", "a", "a\n", "a\nb", "a\nb\n", "a\r\nb\r\n", "a\r\nb", "\ufeffa\nb\n", "\n", "\n\n", "a\n\n", "x\r\n\r\n",
	} {
		assert.Equal(t, content, SplitText(content).Join(), "%q", content)
	}
	txt := SplitText("a\r\nb\r\nc\r\n")
	assert.Equal(t, "\r\n", txt.EOL)
	repl, err := SpanReplacement("```\nB1\nB2\n```")
	require.NoError(t, err)
	got := txt.Replace(2, 2, repl).Join()
	assert.Equal(t, "a\r\nB1\r\nB2\r\nc\r\n", got, "model LF output takes the file's CRLF")
	assert.Equal(t, "a\r\nc\r\n", txt.Replace(2, 2, nil).Join(), "an empty span deletes the lines")
	assert.Equal(t, "a\r\nX\r\nb\r\nc\r\n", txt.Replace(2, 1, []string{"X"}).Join(), "an empty span inserts")
	bomText := SplitText("\ufeffx\ny")
	assert.Equal(t, "\ufeffX\ny", bomText.Replace(1, 1, []string{"X"}).Join())
}

// A kept edit changes the span's bytes only: in a file of mixed line endings, every line outside
// the span is written back byte for byte, and the new lines take the span's own ending.
func TestReplaceKeepsLineEndingsOutsideTheSpan(t *testing.T) {
	cases := []struct {
		name, content string
		start, end    int
		repl          []string
		want          string
	}{
		{"crlf file, an lf line after the span", "a\r\nb\r\nc\nd\r\n", 2, 2, []string{"B"}, "a\r\nB\r\nc\nd\r\n"},
		{"crlf file, an lf line before the span", "a\nb\r\nc\r\nd\r\n", 3, 3, []string{"C1", "C2"}, "a\nb\r\nC1\r\nC2\r\nd\r\n"},
		{"crlf file, a span of lf lines", "a\r\nb\nc\nd\r\ne\r\nf\r\n", 2, 3, []string{"X", "Y", "Z"}, "a\r\nX\nY\nZ\nd\r\ne\r\nf\r\n"},
		{"lf file, a crlf line kept", "a\nb\r\nc\nd\n", 3, 3, []string{"C"}, "a\nb\r\nC\nd\n"},
		{"last line without a newline", "a\r\nb\r\nc", 3, 3, []string{"C", "D"}, "a\r\nb\r\nC\r\nD"},
		{"last line deleted", "a\nb", 2, 2, nil, "a"},
		{"insert after the last line", "a\nb\n", 3, 2, []string{"c"}, "a\nb\nc\n"},
		{"whole file", "a\r\nb\n", 1, 2, []string{"x"}, "x\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, SplitText(tc.content).Replace(tc.start, tc.end, tc.repl).Join())
		})
	}
}

func FuzzTextReplace(f *testing.F) {
	f.Add("a\r\nb\nc\r\n", 2, "X\nY")
	f.Fuzz(func(t *testing.T, content string, line int, repl string) {
		txt := SplitText(content)
		if len(txt.Lines) == 0 || line < 1 || line > len(txt.Lines) {
			return
		}
		if txt.Join() != content {
			t.Fatalf("%q does not round-trip", content)
		}
		same := txt.Replace(line, line, []string{txt.Lines[line-1]}).Join()
		if same != content {
			t.Fatalf("replacing line %d of %q with itself gave %q", line, content, same)
		}
		out := SplitText(txt.Replace(line, line, strings.Split(strings.ReplaceAll(repl, "\r", ""), "\n")).Join())
		for i := 0; i < line-1 && i < len(out.Lines); i++ {
			if out.Lines[i] != txt.Lines[i] || out.Ends[i] != txt.Ends[i] {
				t.Fatalf("line %d before the span changed", i+1)
			}
		}
	})
}

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
				var ee *EditError
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

func TestInstructionsStayShort(t *testing.T) {
	assert.Less(t, len(spanInstruction), 1024)
	assert.Less(t, len(blocksInstruction), 1024)
	tr := &transform{opts: TransformOptions{Task: "t"}, display: "x.go", text: SplitText(strings.Repeat("line\n", 20)), start: 5, n: 3}
	msgs := tr.prompt("span", "")
	assert.Contains(t, msgs[1].Content, "File: x.go (Go)")
	assert.Contains(t, msgs[1].Content, "The span, lines 5-7 of 20")
	assert.Contains(t, msgs[1].Content, "Context before the span")
	assert.Contains(t, msgs[1].Content, "Context after the span")
}

func FuzzParseLineRange(f *testing.F) {
	for _, s := range []string{"1-2", "3-", "7", "0", "5-3", "-", "99999999999999999999-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseLineRange(s)
		if err != nil {
			return
		}
		if r.Start < 1 || (r.End != 0 && r.End < r.Start) {
			t.Fatalf("%q parsed to an impossible range %+v", s, r)
		}
	})
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
