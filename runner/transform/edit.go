package transform

import (
	"fmt"
	"strings"

	"github.com/locumdev/locum/runner/scope"
)

// SpanReplacement reads a span-format reply: exactly one fenced block, the new span.
func SpanReplacement(answer string) ([]string, error) {
	blocks, err := scope.FencedBlocks(answer)
	if err != nil {
		return nil, err
	}
	switch len(blocks) {
	case 0:
		return nil, &scope.EditError{Reason: "the reply has no fenced code block; reply with the new span inside one ``` block"}
	case 1:
		// Every line between the fences is the span, a last empty one included.
		if blocks[0] == "" {
			return nil, nil
		}
		return strings.Split(blocks[0], "\n"), nil
	}
	return nil, &scope.EditError{Reason: fmt.Sprintf("the reply has %d fenced code blocks; reply with exactly one, holding the whole new span", len(blocks))}
}

// SearchReplace is one SEARCH/REPLACE block.
type SearchReplace struct {
	Search, Replace string
}

const (
	markSearch  = "<<<<<<< SEARCH"
	markDivider = "======="
	markReplace = ">>>>>>> REPLACE"
)

// ParseBlocks reads SEARCH/REPLACE blocks from a reply. Text outside blocks is ignored.
func ParseBlocks(answer string) ([]SearchReplace, error) {
	lines := strings.Split(strings.ReplaceAll(answer, "\r\n", "\n"), "\n")
	var out []SearchReplace
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != markSearch {
			continue
		}
		var search, repl []string
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != markDivider; j++ {
			if strings.TrimSpace(lines[j]) == markSearch || strings.TrimSpace(lines[j]) == markReplace {
				return nil, &scope.EditError{Reason: fmt.Sprintf("SEARCH block %d has no ======= line", len(out)+1)}
			}
			search = append(search, lines[j])
		}
		if j == len(lines) {
			return nil, &scope.EditError{Reason: fmt.Sprintf("SEARCH block %d has no ======= line", len(out)+1)}
		}
		k := j + 1
		for ; k < len(lines) && strings.TrimSpace(lines[k]) != markReplace; k++ {
			if strings.TrimSpace(lines[k]) == markSearch {
				break
			}
			repl = append(repl, lines[k])
		}
		if k == len(lines) || strings.TrimSpace(lines[k]) != markReplace {
			return nil, &scope.EditError{Reason: fmt.Sprintf("block %d has no >>>>>>> REPLACE line", len(out)+1)}
		}
		out = append(out, SearchReplace{Search: strings.Join(search, "\n"), Replace: strings.Join(repl, "\n")})
		i = k
	}
	if len(out) == 0 {
		return nil, &scope.EditError{Reason: "the reply has no SEARCH/REPLACE block; use <<<<<<< SEARCH, =======, >>>>>>> REPLACE"}
	}
	return out, nil
}

// ApplyBlocks applies every block to span lines, all or nothing: each search text must occur
// exactly once in the span as it stands when the block is applied.
func ApplyBlocks(span []string, blocks []SearchReplace) ([]string, error) {
	text := strings.Join(span, "\n")
	for i, b := range blocks {
		if b.Search == "" {
			return nil, &scope.EditError{Reason: fmt.Sprintf("block %d has an empty SEARCH text", i+1)}
		}
		switch n := strings.Count(text, b.Search); {
		case n == 0:
			return nil, &scope.EditError{Reason: fmt.Sprintf("block %d: the SEARCH text occurs nowhere in the span; copy it exactly from the span", i+1)}
		case n > 1:
			return nil, &scope.EditError{Reason: fmt.Sprintf("block %d: the SEARCH text occurs %d times in the span; include more lines so it occurs once", i+1, n)}
		}
		text = strings.Replace(text, b.Search, b.Replace, 1)
	}
	if text == "" {
		return nil, nil
	}
	return strings.Split(text, "\n"), nil
}

// DiffStat counts lines added and removed between two versions, by longest common subsequence
// of lines (spans are small, so the quadratic table is cheap).
func DiffStat(before, after []string) (added, removed int) {
	// Trim the common head and tail first: most edits touch a few lines.
	for len(before) > 0 && len(after) > 0 && before[0] == after[0] {
		before, after = before[1:], after[1:]
	}
	for len(before) > 0 && len(after) > 0 && before[len(before)-1] == after[len(after)-1] {
		before, after = before[:len(before)-1], after[:len(after)-1]
	}
	if len(before)*len(after) > 4_000_000 {
		return len(after), len(before)
	}
	prev := make([]int, len(after)+1)
	cur := make([]int, len(after)+1)
	for i := 1; i <= len(before); i++ {
		for j := 1; j <= len(after); j++ {
			if before[i-1] == after[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	common := prev[len(after)]
	return len(after) - common, len(before) - common
}

// Change is a kept edit as the host reviews it: the lines between the span's unchanged head and
// tail, old then new, under the file and the first changed line's number; Old and New are the
// bytes of those lines, what an edit tool would have been sent.
type Change struct {
	Text     string
	Old, New int64
}

// maxChangeLines bounds the compact diff: past it the host is told to read the file's diff.
const maxChangeLines = 40

// Changes is the compact diff of a span's edit, the span starting at line start of file.
func Changes(file string, start int, before, after []string) Change {
	head := 0
	for head < len(before) && head < len(after) && before[head] == after[head] {
		head++
	}
	tail := 0
	for tail < len(before)-head && tail < len(after)-head && before[len(before)-1-tail] == after[len(after)-1-tail] {
		tail++
	}
	old, repl := before[head:len(before)-tail], after[head:len(after)-tail]
	var c Change
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d\n", file, start+head)
	shown := 0
	for _, set := range []struct {
		mark  string
		lines []string
		n     *int64
	}{{"-", old, &c.Old}, {"+", repl, &c.New}} {
		for _, l := range set.lines {
			*set.n += int64(len(l)) + 1
			if shown < maxChangeLines {
				b.WriteString(set.mark + l + "\n")
			}
			shown++
		}
	}
	if shown > maxChangeLines {
		fmt.Fprintf(&b, "... %d more changed lines: git diff -- %s\n", shown-maxChangeLines, file)
	}
	c.Text = b.String()
	return c
}

// spanBytes is the span's size as the host would read it.
func spanBytes(lines []string) int64 {
	var n int64
	for _, l := range lines {
		n += int64(len(l)) + 1
	}
	return n
}
