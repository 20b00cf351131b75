package runtest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var hunkHead = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@`)

// ApplyDiff applies a unified diff of one file to before, as patch would: each hunk's context and
// removed lines must be before's at the line the hunk names. It is how a test plays a host that
// applies a handoff's diff with a tool of its own.
func ApplyDiff(diff, before string) (string, error) {
	old := strings.SplitAfter(before, "\n")
	if old[len(old)-1] == "" {
		old = old[:len(old)-1]
	}
	var out []string
	at := 0 // the next line of old not yet copied
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		m := hunkHead.FindStringSubmatch(l)
		if m == nil {
			if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") {
				continue
			}
			return "", fmt.Errorf("line %d: %q is no hunk's", i+1, l)
		}
		start, _ := strconv.Atoi(m[1])
		if m[2] == "0" {
			start++ // a hunk that removes nothing names the line before it
		}
		for ; at < start-1; at++ {
			out = append(out, old[at])
		}
		for i+1 < len(lines) && !hunkHead.MatchString(lines[i+1]) {
			i++
			l := lines[i]
			if l == `\ No newline at end of file` {
				n := len(out) - 1
				out[n] = strings.TrimSuffix(out[n], "\n")
				continue
			}
			if l == "" {
				return "", fmt.Errorf("line %d: empty", i+1)
			}
			text := l[1:] + "\n"
			switch l[0] {
			case ' ', '-':
				if at >= len(old) || strings.TrimSuffix(old[at], "\n") != l[1:] {
					return "", fmt.Errorf("line %d: %q is not line %d of the file", i+1, l, at+1)
				}
				if l[0] == ' ' {
					out = append(out, old[at])
				}
				at++
			case '+':
				out = append(out, text)
			default:
				return "", fmt.Errorf("line %d: %q", i+1, l)
			}
		}
	}
	out = append(out, old[at:]...)
	return strings.Join(out, ""), nil
}
