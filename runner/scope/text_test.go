package scope

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/engine"
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
				var bad *engine.BadInputError
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
	got := txt.Replace(2, 2, []string{"B1", "B2"}).Join()
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
