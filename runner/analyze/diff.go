package analyze

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/locumdev/locum/runner/engine"
)

// DiffRow is one thing two runs are compared on.
type DiffRow struct {
	Key  string `json:"key"`
	A    string `json:"a"`
	B    string `json:"b"`
	Same bool   `json:"same"`
}

// Diff is two runs side by side. SameTask is false when their tasks or files differ: the
// comparison still shows, but it is not one task run twice.
type Diff struct {
	A        string    `json:"a"`
	B        string    `json:"b"`
	SameTask bool      `json:"same_task"`
	Rows     []DiffRow `json:"rows"`
}

// Compare puts the settings, prompts' hashes, reply classes, attempts and verdicts of two runs
// side by side, in the order the first run journalled them.
func Compare(idA string, a []map[string]any, idB string, b []map[string]any) Diff {
	fa, fb := facts(a), facts(b)
	ra, rb := Analyze(idA, a), Analyze(idB, b)
	fa.add("attempts", fmt.Sprint(ra.Attempts))
	fb.add("attempts", fmt.Sprint(rb.Attempts))
	fa.add("primary stage", ra.Primary)
	fb.add("primary stage", rb.Primary)
	fa.add("final stage", ra.Final)
	fb.add("final stage", rb.Final)
	d := Diff{A: idA, B: idB, Rows: []DiffRow{}}
	seen := map[string]bool{}
	for _, k := range append(fa.order, fb.order...) {
		if seen[k] {
			continue
		}
		seen[k] = true
		va, vb := fa.vals[k], fb.vals[k]
		d.Rows = append(d.Rows, DiffRow{Key: k, A: va, B: vb, Same: va == vb})
	}
	d.SameTask = fa.vals["task"] == fb.vals["task"] && fa.vals["file"] == fb.vals["file"] && fa.vals["lines"] == fb.vals["lines"]
	return d
}

type factList struct {
	order []string
	vals  map[string]string
}

func (f *factList) add(k, v string) {
	if _, ok := f.vals[k]; !ok {
		f.order = append(f.order, k)
	}
	f.vals[k] = v
}

func facts(events []map[string]any) *factList {
	f := &factList{vals: map[string]string{}}
	requests, replies, verifies := 0, 0, 0
	for _, ev := range events {
		switch engine.EventKind(ev) {
		case "run_start":
			e, _ := engine.DecodeEvent[engine.RunStartEvent](ev)
			f.add("mode", e.Mode)
			f.add("model", e.Model)
			f.add("routing", e.Routing)
			f.add("version", e.Version)
			f.add("task", taskHash(e.Args))
			for _, s := range e.Settings {
				if s.Key != "" {
					f.add("setting "+s.Key, s.Value+" ("+s.Source+")")
				}
			}
		case "scope":
			e, _ := engine.DecodeEvent[engine.FileScopeEvent](ev)
			if e.File != "" {
				f.add("file", e.File)
			}
			if e.Lines != "" {
				f.add("lines", e.Lines)
			}
			if e.Verify != nil {
				f.add("verify", *e.Verify)
			}
		case "request":
			requests++
			e, _ := engine.DecodeEvent[engine.RequestEvent](ev)
			h := e.PromptSHA256
			if len(h) > 12 {
				h = h[:12]
			}
			f.add(fmt.Sprintf("request %d prompt", requests), fmt.Sprintf("%s %d bytes", orDefault(h, "?"), e.PromptBytes))
		case "reply":
			replies++
			e, _ := engine.DecodeEvent[engine.ReplyEvent](ev)
			class := e.Class
			if class == "" && e.Error != nil {
				class = "error"
			}
			f.add(fmt.Sprintf("reply %d class", replies), class)
		case "attempt":
			e, _ := engine.DecodeEvent[engine.AttemptEvent](ev)
			edit := "not written"
			switch {
			case e.EditError != "":
				edit = "not applied"
			case e.Wrote():
				edit = fmt.Sprintf("applied, %d lines", *e.SpanLines)
			}
			f.add(fmt.Sprintf("attempt %d edit", e.Attempt), edit)
		case "verify":
			verifies++
			e, _ := engine.DecodeEvent[engine.VerifyEvent](ev)
			f.add(fmt.Sprintf("verify %d", verifies), e.Verdict)
		case "run_end":
			e, _ := engine.DecodeEvent[engine.RunEndEvent](ev)
			f.add("status", string(e.Status))
		}
	}
	return f
}

// taskHash stands for the task in a comparison: tasks can be long and are the user's text.
func taskHash(args []string) string {
	data, _ := json.Marshal(args)
	if args == nil {
		return "?"
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

// Differing returns the rows where the runs differ.
func (d Diff) Differing() []DiffRow {
	var out []DiffRow
	for _, r := range d.Rows {
		if !r.Same {
			out = append(out, r)
		}
	}
	return out
}
