package analyze

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
		switch str(ev["event"]) {
		case "run_start":
			f.add("mode", str(ev["mode"]))
			f.add("model", str(ev["model"]))
			f.add("routing", str(ev["routing"]))
			f.add("version", str(ev["version"]))
			f.add("task", taskHash(ev["args"]))
			if list, ok := ev["settings"].([]any); ok {
				for _, s := range list {
					m, _ := s.(map[string]any)
					if k := str(m["key"]); k != "" {
						f.add("setting "+k, str(m["value"])+" ("+str(m["source"])+")")
					}
				}
			}
		case "scope":
			for _, k := range []string{"file", "lines", "verify"} {
				if v, ok := ev[k]; ok {
					f.add(k, fmt.Sprint(v))
				}
			}
		case "request":
			requests++
			h := str(ev["prompt_sha256"])
			if len(h) > 12 {
				h = h[:12]
			}
			f.add(fmt.Sprintf("request %d prompt", requests), fmt.Sprintf("%s %v bytes", orDefault(h, "?"), ev["prompt_bytes"]))
		case "reply":
			replies++
			class := str(ev["class"])
			if class == "" && ev["error"] != nil {
				class = "error"
			}
			f.add(fmt.Sprintf("reply %d class", replies), class)
		case "attempt":
			if e := str(ev["edit_error"]); e != "" {
				f.add(fmt.Sprintf("attempt %v edit", ev["attempt"]), "not applied")
			} else {
				f.add(fmt.Sprintf("attempt %v edit", ev["attempt"]), fmt.Sprintf("applied, %v lines", ev["span_lines"]))
			}
		case "verify":
			verifies++
			f.add(fmt.Sprintf("verify %d", verifies), str(ev["verdict"]))
		case "run_end":
			f.add("status", str(ev["status"]))
		}
	}
	return f
}

// taskHash stands for the task in a comparison: tasks can be long and are the user's text.
func taskHash(args any) string {
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
