package transform

import (
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

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

// hunk is one run of changed lines: Old lines from line At of the old text replaced by New.
type hunk struct {
	At       int
	Old, New []string
}

// hunks are the changed runs between two versions of a span, found by a line diff
// (go-udiff, the Myers-style diff golang.org/x/tools uses, published as a module): an edit that
// touches lines 3 and 40 is two hunks of one line each, not one of 38.
func hunks(before, after []string) []hunk {
	join := func(lines []string) string {
		if len(lines) == 0 {
			return ""
		}
		return strings.Join(lines, "\n") + "\n"
	}
	b, a := join(before), join(after)
	var out []hunk
	for _, e := range udiff.Lines(b, a) {
		h := hunk{At: strings.Count(b[:e.Start], "\n") + 1, Old: splitLines(b[e.Start:e.End]), New: splitLines(e.New)}
		if n := len(out); n > 0 && out[n-1].At+len(out[n-1].Old) == h.At {
			// Adjacent edits are one run of changed lines.
			out[n-1].Old = append(out[n-1].Old, h.Old...)
			out[n-1].New = append(out[n-1].New, h.New...)
			continue
		}
		out = append(out, h)
	}
	return out
}

// splitLines is text's lines, without the break that ends the last.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// DiffStat counts lines added and removed between two versions.
func DiffStat(before, after []string) (added, removed int) {
	for _, h := range hunks(before, after) {
		added += len(h.New)
		removed += len(h.Old)
	}
	return added, removed
}

// Change is a kept edit as the host reviews it: each run of changed lines, old then new, under
// the file and its first line's number; Old and New are the bytes of the changed lines, what an
// edit tool would have been sent. Cut says the text stops short and sends the host to the
// file's diff for the rest, which it then reads whole (Old + New).
type Change struct {
	Text     string
	Old, New int64
	Cut      bool
}

// maxChangeLines bounds the compact diff: past it the host is told to read the file's diff.
const maxChangeLines = 40

// Changes is the compact diff of a span's edit, the span starting at line start of file.
func Changes(file string, start int, before, after []string) Change {
	var c Change
	var b strings.Builder
	shown, total := 0, 0
	for _, h := range hunks(before, after) {
		if shown < maxChangeLines {
			fmt.Fprintf(&b, "%s:%d\n", file, start+h.At-1)
		}
		for _, set := range []struct {
			mark  string
			lines []string
			n     *int64
		}{{"-", h.Old, &c.Old}, {"+", h.New, &c.New}} {
			for _, l := range set.lines {
				*set.n += int64(len(l)) + 1
				if shown < maxChangeLines {
					b.WriteString(set.mark + l + "\n")
					shown++
				}
				total++
			}
		}
	}
	if total > shown {
		c.Cut = true
		fmt.Fprintf(&b, "... %d more changed lines: git diff -- %s\n", total-shown, file)
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
