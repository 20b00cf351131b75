package mutate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineKinds(t *testing.T) {
	tests := []struct {
		name  string // the file's name: its extension chooses the comment syntax
		src   string
		want  []string // every Desc, in line then offset order
		start int      // 0: line 1
	}{
		{
			name: "x.sh",
			src:  "n=41 # the answer less one\necho \"done\" '' && exit 0\n}\n\n  \n",
			want: []string{
				`line 1: deleted "n=41 # the answer less one"`,
				`line 1: "41" to "42"`,
				`line 2: deleted "echo "done" '' && exit 0"`,
				`line 2: string "done" emptied`,
				`line 2: empty string given "x"`,
				`line 2: "0" to "1"`,
			},
		},
		{
			name: "x.js",
			src:  "/* a block\n   comment 1 */ let ok = true; // false\nx = 0x1F + 1.5 + v2 + 199;\n",
			want: []string{
				`line 2: deleted "comment 1 */ let ok = true; // false"`,
				`line 2: "true" to "false"`,
				`line 3: deleted "x = 0x1F + 1.5 + v2 + 199;"`,
				`line 3: "1.5" to "2.5"`,
				`line 3: "199" to "200"`,
			},
		},
		{
			name: "x.py",
			src:  "\"\"\"Doc 1\nstring 2.\"\"\"\nif x == 'it''s':\n    return False\n",
			want: []string{
				`line 3: deleted "if x == 'it''s':"`,
				`line 3: string "it" emptied`,
				`line 3: string "s" emptied`,
				`line 4: deleted "return False"`,
				`line 4: "False" to "True"`,
			},
		},
		{
			// A C file's # is a directive, not a comment; its ' quotes a character, left alone.
			name: "x.c",
			src:  "#define N 8\nchar c = 'a';\n",
			want: []string{
				`line 1: deleted "#define N 8"`,
				`line 1: "8" to "9"`,
				`line 2: deleted "char c = 'a';"`,
			},
		},
		{
			// Prose: an apostrophe is no quote; an unknown file's # is a comment.
			name: "NOTES",
			src:  "it's 9 o'clock\n# 10\n",
			want: []string{
				`line 1: deleted "it's 9 o'clock"`,
				`line 1: "9" to "10"`,
			},
		},
		{
			name:  "x.md",
			src:   "<!-- 1\n2 -->\n## Step 3\n",
			start: 1,
			want: []string{
				`line 3: deleted "## Step 3"`,
				`line 3: "3" to "4"`,
			},
		},
		{
			// A string still open at the line's end is left whole.
			name: "x.go",
			src:  "s := `a\nb` + \"c\n",
			want: []string{
				`line 1: deleted "s := ` + "`" + `a"`,
				`line 2: deleted "b` + "`" + ` + "c"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			idx := newLineIndex(src)
			start := max(tt.start, 1)
			sites := lineSites(tt.name, src, idx, start, idx.count())
			var got []string
			for _, s := range sites { // by line, a line's deletion before its literals
				got = append(got, s.desc)
			}
			assert.Equal(t, tt.want, got)
			ms, err := Span(tt.name, src, start, idx.count(), 100)
			require.NoError(t, err)
			assert.Len(t, ms, len(tt.want))
		})
	}
}

func TestIncrement(t *testing.T) {
	for in, want := range map[string]string{"0": "1", "9": "10", "199": "200", "007": "008", "999": "1000"} {
		assert.Equal(t, want, increment(in), in)
	}
}
