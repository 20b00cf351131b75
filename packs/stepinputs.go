package packs

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// InputKind is what a workflow does with a step input's value before its mode has it.
type InputKind int

const (
	// InputText is a template expanded as it is.
	InputText InputKind = iota
	// InputPath is a path of the repository's own, from its root: a value outside it is the
	// item's refusal, and for a step that edits, one inside a git directory is refused.
	InputPath
	// InputVerify is the command that judges the step's items in place of the workflow's verify:
	// expanded and checked as a verify is (each value but a parameter one quoted shell word). A
	// mode has at most one.
	InputVerify
)

// StepInput is one key a workflow step's `with` may give its mode. A mode declares its inputs
// once, in its registration (engine.Mode.StepInputs); the pack schema's step part, the list in
// spec/pack.md and a workflow's refusal of any other key are made from the declarations.
type StepInput struct {
	// Name is the key, as `with` writes it.
	Name string
	// Doc says what the value is, in one line.
	Doc string
	// Item, when set, names the item's value (file, symbol, line or item) the input takes when
	// the step's `with` does not give it.
	Item string
	Kind InputKind
	// Setting, when set, makes the input that setting of the item's run, applied as a tool call's
	// argument is: it may narrow a rail, never widen it. Such an input is made by SettingInput,
	// named and documented as the setting is.
	Setting Key
}

// SettingInput is a step input that sets the setting k of the item's run.
func SettingInput(k Key) StepInput {
	s, ok := specOf(k.name)
	if !ok {
		panic(fmt.Sprintf("packs: %s is no declared setting", k))
	}
	return StepInput{Name: k.name, Doc: s.doc, Setting: k}
}

// ItemNames are the names an item of any list gives a step, each once.
func ItemNames() []string {
	var out []string
	for _, kind := range []string{"files", "symbols", "lines"} {
		for _, n := range ItemVars[kind] {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// checkStepInputs refuses a declaration of step inputs that could not be read one way: a mode
// that no step runs, a key named twice or written as no key, an input with no doc, an item's name
// no list gives, two verifies, or a setting input the mode does not take or that SettingInput
// did not make.
func checkStepInputs(m ModeSpec) error {
	if len(m.StepInputs) > 0 && !m.Step {
		return fmt.Errorf("mode %q declares step inputs but no step runs it", m.Name)
	}
	seen := map[string]bool{}
	verifies := 0
	for _, in := range m.StepInputs {
		switch {
		case !slugWord.MatchString(in.Name):
			return fmt.Errorf("mode %q declares step input %q: want lower-case letters, digits and _", m.Name, in.Name)
		case seen[in.Name]:
			return fmt.Errorf("mode %q declares step input %q twice", m.Name, in.Name)
		case strings.TrimSpace(in.Doc) == "":
			return fmt.Errorf("mode %q declares step input %q with no doc", m.Name, in.Name)
		case in.Item != "" && !slices.Contains(ItemNames(), in.Item):
			return fmt.Errorf("mode %q's step input %q defaults to the item's %q, which no list gives (%s)", m.Name, in.Name, in.Item, strings.Join(ItemNames(), ", "))
		}
		seen[in.Name] = true
		if in.Kind == InputVerify {
			verifies++
		}
		if in.Setting != (Key{}) {
			if in != SettingInput(in.Setting) {
				return fmt.Errorf("mode %q's step input %q sets %s: make it with SettingInput", m.Name, in.Name, in.Setting)
			}
			if !slices.Contains(m.Settings, in.Setting) {
				return fmt.Errorf("mode %q's step input %q sets %s, which the mode does not take", m.Name, in.Name, in.Setting)
			}
		}
	}
	if verifies > 1 {
		return fmt.Errorf("mode %q declares %d verify inputs; a step's items are judged by one", m.Name, verifies)
	}
	return nil
}

// slugWord is a step input's key: what a template's name and a JSON key both write plainly.
var slugWord = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// StepInputs are the inputs the registered mode declares, in its order; none for a mode not
// registered.
func StepInputs(mode string) []StepInput {
	m, _ := registeredMode(mode)
	return slices.Clone(m.StepInputs)
}

// StepInputOf is the registered mode's input of that key.
func StepInputOf(mode, name string) (StepInput, bool) {
	m, _ := registeredMode(mode)
	i := slices.IndexFunc(m.StepInputs, func(in StepInput) bool { return in.Name == name })
	if i < 0 {
		return StepInput{}, false
	}
	return m.StepInputs[i], true
}

// InputNames are the keys of the inputs, in their order, joined for a sentence: "a, b and c".
func InputNames(inputs []StepInput) string {
	names := make([]string, len(inputs))
	for i, in := range inputs {
		names[i] = in.Name
	}
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// OwnVerify is the verify the step's `with` gives its items in place of the workflow's: the
// template of its mode's InputVerify input, if the step gives it.
func (st WorkflowStep) OwnVerify() (template string, own bool) {
	for _, in := range StepInputs(st.Mode) {
		if in.Kind == InputVerify {
			template, own = st.With[in.Name]
			return template, own
		}
	}
	return "", false
}

// Default says in words what the input takes when the step's `with` does not give it; "" where
// it takes nothing.
func (in StepInput) Default() string {
	switch {
	case in.Item != "":
		return "the item's " + in.Item
	case in.Kind == InputVerify:
		return "the workflow's verify"
	case in.Setting != (Key{}):
		return "the setting as the run resolves it"
	}
	return ""
}
