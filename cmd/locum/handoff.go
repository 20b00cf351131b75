package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// printHandoff writes a red run's handoff for a person or a host reading stderr: what it shows and
// by which rule, the diff, the verify's tail, what was cut and what to do next. The repository's
// and the verify's text is escaped line by line.
func printHandoff(w io.Writer, h *engine.Handoff, indent string) {
	head := fmt.Sprintf("%shandoff (%s, %d bytes): %s", indent, untrusted.Escape(h.Failure), h.Bytes, untrusted.Escape(h.Rule))
	if h.Attempt != nil {
		head += fmt.Sprintf(": attempt %d", *h.Attempt)
	}
	fmt.Fprintln(w, head)
	block := func(s string) {
		s = strings.TrimRight(untrusted.EscapeLines(s), "\n")
		if s == "" {
			s = "(nothing)"
		}
		fmt.Fprintln(w, indent+"  "+strings.ReplaceAll(s, "\n", "\n"+indent+"  "))
	}
	switch {
	case h.Diff != nil:
		block(*h.Diff)
	case h.NoDiff != nil:
		fmt.Fprintf(w, "%sno diff: %s\n", indent, untrusted.Escape(*h.NoDiff))
	}
	if h.VerifyTail != nil {
		of := "the last verify"
		if h.Verified {
			of = "the verify on this diff"
		}
		fmt.Fprintf(w, "%sverify tail (%s):\n", indent, of)
		block(*h.VerifyTail)
	}
	for _, it := range h.Items {
		fmt.Fprintf(w, "%sitem %s %d %s (run %s):\n", indent, untrusted.Escape(it.Step), it.Index, untrusted.Escape(it.Item), untrusted.Escape(it.Run))
		if it.Handoff != nil {
			printHandoff(w, it.Handoff, indent+"  ")
		}
	}
	if len(h.Cut) > 0 {
		fmt.Fprintf(w, "%scut: %s\n", indent, untrusted.Escape(strings.Join(h.Cut, "; ")))
	}
	fmt.Fprintf(w, "%snext: %s\n", indent, untrusted.Escape(h.Next))
}
