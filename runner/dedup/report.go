package dedup

import (
	"fmt"
	"strconv"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/untrusted"
)

// Score4 prints a score as a person reads it, to four decimals, never as -0.0000.
func Score4(s float64) string {
	out := strconv.FormatFloat(s, 'f', 4, 64)
	if out == "-0.0000" {
		return "0.0000"
	}
	return out
}

// PairLine is a pair as printed: `0.8696 a.md b.md`, and `(a.md inside)` when the score is the
// share of one inside the other. Names are escaped: they come from the repository.
func PairLine(p Pair) string {
	line := Score4(p.Score) + " " + untrusted.Escape(p.A) + " " + untrusted.Escape(p.B)
	if p.Inside != "" {
		line += " (" + untrusted.Escape(p.Inside) + " inside)"
	}
	return line
}

// Lines are what a screen found, as printed for a person or a host: each group (a line saying
// its size and weakest pair, then each member indented) or each pair, at most show of them (0 for
// all).
func (r *Result) Lines(show int) []string {
	var out []string
	if r.Groups != nil {
		for k, g := range r.Groups {
			if show > 0 && k == show {
				break
			}
			out = append(out, fmt.Sprintf("group %d: %d files, %s, weakest %s", k+1, len(g.Files), client.Count(g.Pairs, "pair", "pairs"), PairLine(g.Weakest)))
			for _, f := range g.Files {
				out = append(out, "  "+untrusted.Escape(f))
			}
		}
		return out
	}
	for k, p := range r.Pairs {
		if show > 0 && k == show {
			break
		}
		out = append(out, PairLine(p))
	}
	return out
}

// Shown is how many groups or pairs Lines(show) prints.
func (r *Result) Shown(show int) int {
	n := len(r.Pairs)
	if r.Groups != nil {
		n = len(r.Groups)
	}
	if show > 0 {
		n = min(n, show)
	}
	return n
}

// Summary is the closing line of a screen: how many groups or pairs it found among how many
// files, and how many are shown.
func (r *Result) Summary(show int) string {
	threshold := strconv.FormatFloat(r.Threshold, 'f', -1, 64)
	if r.Groups != nil {
		members := 0
		for _, g := range r.Groups {
			members += len(g.Files)
		}
		return fmt.Sprintf("%s of near-duplicates (%s, %s at or above %s) among %s (showing %d)",
			client.Count(len(r.Groups), "group", "groups"), client.Count(members, "file", "files"), client.Count(r.Total, "pair", "pairs"), threshold, client.Count(len(r.Files), "file", "files"), r.Shown(show))
	}
	return fmt.Sprintf("%s at or above %s among %s (showing %d)", client.Count(r.Total, "pair", "pairs"), threshold, client.Count(len(r.Files), "file", "files"), r.Shown(show))
}

// Figures is the machine-readable line of a screen's figures.
func (r *Result) Figures() string {
	out := fmt.Sprintf("dedup files=%d pairs=%d", len(r.Files), r.Total)
	if r.Groups != nil {
		out += fmt.Sprintf(" groups=%d", len(r.Groups))
	}
	return out + fmt.Sprintf(" threshold=%s method=%s", strconv.FormatFloat(r.Threshold, 'f', -1, 64), r.Method)
}

// Warning says the embeddings may not tell the files apart, with the figures that show it; ""
// when they do, or when the screen compared words.
func (r *Result) Warning() string {
	s := r.Separation
	if s == nil || s.Separates {
		return ""
	}
	return fmt.Sprintf("the embeddings may not tell these files apart: %.0f%% of %d sampled pairs score at or above %s, and 90%% of them lie from %s to %s; either most files are near-duplicates of each other or the model's vectors do not separate them; the lexical method (--method lexical) compares their words",
		100*s.AtOrAbove, s.Sampled, strconv.FormatFloat(r.Threshold, 'f', -1, 64), Score4(s.Low), Score4(s.High))
}
