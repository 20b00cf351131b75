package packs

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/schema"
)

// Workflow is a named chain of steps a pack declares (contract 1.2): each step one mode, run
// once or for each item of a list, and a final verify on the combined result.
type Workflow struct {
	Summary string           `json:"summary,omitempty"`
	Params  map[string]Param `json:"params,omitempty"`
	Steps   []WorkflowStep   `json:"steps"`
	// Verify judges the combined result of a workflow that edits; each edit's own verify
	// defaults to it.
	Verify string `json:"verify,omitempty"`
}

// Param is a value a workflow takes from whoever runs it (locum run --param NAME=VALUE).
type Param struct {
	Doc string `json:"doc,omitempty"`
	// Default, when set, makes the parameter optional.
	Default *string `json:"default,omitempty"`
}

// WorkflowStep is one step: a mode, its inputs (templates), and what it runs for each of.
type WorkflowStep struct {
	Name    string            `json:"name"`
	Mode    string            `json:"mode"`
	ForEach *ForEach          `json:"for_each,omitempty"`
	With    map[string]string `json:"with,omitempty"`
}

// ForEach is the list a step runs over: exactly one of its fields is set, a template.
type ForEach struct {
	// Files is a glob of repository files (filepath.Match, * not crossing /).
	Files string `json:"files,omitempty"`
	// Symbols is a glob of files whose declarations are the items (symbols.List: those of Go,
	// Python, TypeScript, JavaScript and Rust files that hold no other; test files and other
	// languages left out), each named as --symbol takes it.
	Symbols string `json:"symbols,omitempty"`
	// Lines is a repository file whose non-blank lines are the items.
	Lines string `json:"lines,omitempty"`
}

// Kind is which list the step runs over: files, symbols or lines.
func (f ForEach) Kind() (kind, pattern string) {
	switch {
	case f.Files != "":
		return "files", f.Files
	case f.Symbols != "":
		return "symbols", f.Symbols
	}
	return "lines", f.Lines
}

// ItemVars are the names an item gives a step's templates, by kind of list.
var ItemVars = map[string][]string{
	"files":   {"item", "file"},
	"symbols": {"item", "file", "symbol"},
	"lines":   {"item", "line"},
}

// templateRef is one {{name}} in a template.
var templateRef = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.-]*)\s*\}\}`)

// StepEdits says a workflow step of mode edits files, so its workflow must have a verify.
func StepEdits(mode string) bool {
	m, ok := registeredMode(mode)
	return ok && m.Step && m.EditsInPlace
}

// StepModes are the registered modes a workflow step may run, sorted.
func StepModes() []string {
	registeredMu.RLock()
	defer registeredMu.RUnlock()
	var out []string
	for name, m := range registered {
		if m.Step {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// StepOutput is the template name of an earlier step's output.
func StepOutput(step string) string { return "steps." + step + ".output" }

// TemplateError is a template that names a value it is not given.
type TemplateError struct {
	Template string
	Name     string
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("%q names {{%s}}, which is not given here", e.Template, e.Name)
}

// Expand fills every {{name}} of template from vars; a name vars does not hold is an error.
func Expand(template string, vars map[string]string) (string, error) {
	return expand(template, vars, func(_, v string) string { return v })
}

// ExpandCommand fills a shell command's template: a value asWritten names goes in as it is (a
// parameter, the caller's own text, as a verify it could give itself), every other (an item's
// file, symbol or line, an earlier step's output, which a model may have written) as one
// single-quoted shell word, which CheckCommand holds to a place where bash reads it as one
// argument, so no value is ever run as shell.
func ExpandCommand(template string, vars map[string]string, asWritten func(name string) bool) (string, error) {
	out, err := expand(template, vars, func(name, v string) string {
		if asWritten(name) {
			return v
		}
		return ShellQuote(v)
	})
	if err != nil {
		return "", err
	}
	if err := CheckCommand(template, vars, asWritten); err != nil {
		return "", err
	}
	return out, nil
}

// ShellQuote is s as one POSIX shell word.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func expand(template string, vars map[string]string, put func(name, v string) string) (string, error) {
	var missing string
	out := templateRef.ReplaceAllStringFunc(template, func(m string) string {
		name := templateRef.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok && missing == "" {
			missing = name
		}
		return put(name, v)
	})
	if missing != "" {
		return "", &TemplateError{Template: template, Name: missing}
	}
	return out, nil
}

// workflowProblems checks what the schema cannot: step names unique, and every template naming
// only a parameter, the step's item or an earlier step's output.
func workflowProblems(display string, wfs map[string]Workflow) []schema.Problem {
	var problems []schema.Problem
	add := func(ptr, format string, args ...any) {
		problems = append(problems, schema.Problem{File: display, Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	names := make([]string, 0, len(wfs))
	for name := range wfs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		wf := wfs[name]
		base := "/contributes/workflows/" + name
		known := map[string]bool{}
		for p := range wf.Params {
			known[p] = true
		}
		check := func(ptr, tmpl string, extra []string) {
			for _, m := range templateRef.FindAllStringSubmatch(tmpl, -1) {
				if !known[m[1]] && !slices.Contains(extra, m[1]) {
					add(ptr, "{{%s}} is not a parameter of workflow %s, this step's item, or an earlier step's output", m[1], name)
				}
			}
		}
		// A parameter goes in as written: its default where it has one, else a plain word; it
		// is checked again with the value given when the workflow runs.
		params := map[string]string{}
		for p, decl := range wf.Params {
			params[p] = "param"
			if decl.Default != nil {
				params[p] = *decl.Default
			}
		}
		checkCommand := func(ptr, command string, extra []string) {
			check(ptr, command, extra)
			asWritten := func(n string) bool { _, param := params[n]; return param && !slices.Contains(extra, n) }
			if err := CheckCommand(command, params, asWritten); err != nil {
				add(ptr, "%v", err)
			}
		}
		seen := map[string]int{}
		for i, st := range wf.Steps {
			ptr := fmt.Sprintf("%s/steps/%d", base, i)
			if j, dup := seen[st.Name]; dup {
				add(ptr+"/name", "step name %q is used twice (also step %d); give each step its own name", st.Name, j)
			}
			seen[st.Name] = i
			var item []string
			if st.ForEach != nil {
				kind, pattern := st.ForEach.Kind()
				check(ptr+"/for_each/"+kind, pattern, nil)
				item = ItemVars[kind]
			}
			// A step of a mode this locum does not register as one is refused when it runs; its
			// inputs are judged as templates alone.
			m, stepMode := registeredMode(st.Mode)
			stepMode = stepMode && m.Step
			for _, k := range slices.Sorted(maps.Keys(st.With)) {
				at, v := ptr+"/with/"+k, st.With[k]
				in, declared := StepInputOf(st.Mode, k)
				if stepMode && !declared {
					add(at, "%q is not an input of mode %s, which takes %s", k, st.Mode, InputNames(m.StepInputs))
					continue
				}
				if in.Kind == InputVerify {
					checkCommand(at, v, item)
					continue
				}
				check(at, v, item)
				if in.Kind == InputPath && StepEdits(st.Mode) && gitsafe.NamesGitDir(v) {
					add(at, "%q is inside a git directory, where git reads its config and hooks; no workflow edits a file there", v)
				}
				// A setting written out is judged now; one a template fills, when the item runs.
				if spec, ok := specOf(in.Setting.name); ok && !templateRef.MatchString(v) {
					if _, err := spec.check(v); err != nil {
						add(at, "want %v", err)
					}
				}
			}
			known[StepOutput(st.Name)] = true
		}
		checkCommand(base+"/verify", wf.Verify, nil)
		named := map[string]bool{}
		for _, m := range templateRef.FindAllStringSubmatch(wf.Verify, -1) {
			named[m[1]] = true
		}
		// Whether a workflow edits is known only when this locum registers each step's mode as
		// one a step runs; a step of another is refused when it runs.
		edits, registeredAll := false, true
		for _, st := range wf.Steps {
			if m, ok := registeredMode(st.Mode); !ok || !m.Step {
				registeredAll = false
			}
		}
		for i, st := range wf.Steps {
			if !StepEdits(st.Mode) {
				continue
			}
			edits = true
			if _, own := st.OwnVerify(); own {
				continue
			}
			// The step's items are judged by the workflow's verify, before this step and the
			// ones after it have an output to give it.
			for _, later := range wf.Steps[i:] {
				if named[StepOutput(later.Name)] {
					add(base+"/verify", "step %s's items are judged by this verify (it gives no with.verify), so it cannot name {{%s}}, which step %s has not given yet", st.Name, StepOutput(later.Name), st.Name)
				}
			}
		}
		switch {
		case !registeredAll:
		case edits && strings.TrimSpace(wf.Verify) == "":
			add(base, "workflow %s edits files (a transform step) but declares no verify: its combined result could not be judged", name)
		case !edits && strings.TrimSpace(wf.Verify) != "":
			add(base+"/verify", "workflow %s edits no file, so its verify would judge a tree no step changed; leave it out", name)
		}
	}
	return problems
}

// Workflow finds the workflow name among the composed packs, the last pack that declares it
// winning, as a setting does; ok is false when none does.
func (c *Composition) Workflow(name string) (wf Workflow, from string, ok bool) {
	for _, p := range c.Packs {
		if w, found := p.Contributes.Workflows[name]; found {
			wf, from, ok = w, p.Ref, true
		}
	}
	return wf, from, ok
}

// WorkflowNames lists the composed packs' workflows, sorted.
func (c *Composition) WorkflowNames() []string {
	set := map[string]bool{}
	for _, p := range c.Packs {
		for name := range p.Contributes.Workflows {
			set[name] = true
		}
	}
	out := make([]string, 0, len(set))
	for name := range set {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
