package packs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// WorkerInstallPath is where init installs the local worker as a Claude Code subagent.
const WorkerInstallPath = ".claude/agents/" + workerFileName

// workerFileName is the worker's subagent file, in a project's agents folder or a plugin's.
const workerFileName = "local-worker.md"

// workerPersona is the persona the worker is made from: its name, description, host model alias
// and turn cap are the persona's fields, its prompt the persona's own words.
const workerPersona = DefaultPack + "/personas/local-worker.md"

// WorkerSkill is the skill the worker has in its context from its start.
const WorkerSkill = "delegate-local"

// workerSections are the persona's sections the worker's prompt is made of, after its opening
// paragraph: short, since the host loads its own instructions (CLAUDE.md) into every subagent too.
var workerSections = []string{"## Charter", "## Working through locum"}

// HostNames are the names Claude Code gives what the worker is handed, which depend on where
// locum's server and the skill come from: a project's .mcp.json and .claude/skills, or a plugin.
type HostNames struct {
	// ToolPrefix goes before a tool's name as the server lists it.
	ToolPrefix string
	// Skill is the delegate-local skill's name.
	Skill string
}

// ProjectNames name a server of the project's .mcp.json (mcp__SERVER__TOOL) and the project's own
// skill.
var ProjectNames = HostNames{ToolPrefix: "mcp__" + ServerName + "__", Skill: WorkerSkill}

// PluginNames name what a plugin bundles. Claude Code calls a tool of a plugin's server
// mcp__plugin_PLUGIN_SERVER__TOOL, and a plugin's skill PLUGIN:SKILL
// (https://code.claude.com/docs/en/mcp#plugin-provided-mcp-servers,
// https://code.claude.com/docs/en/skills); it replaces a character outside A-Z, a-z, 0-9, _ and -
// in the tool's name with _, which PluginName and ServerName have none of.
var PluginNames = HostNames{
	ToolPrefix: "mcp__plugin_" + PluginName + "_" + ServerName + "__",
	Skill:      PluginName + ":" + WorkerSkill,
}

// Worker is what init writes into the host's subagent file.
type Worker struct {
	// Tools are the MCP tools of the locum server the worker may call, by the server's names;
	// nothing else, so it cannot write a file but through locum.
	Tools []string
	// Model is the host's model alias for the worker (haiku), MaxTurns its turn cap.
	Model    string
	MaxTurns int
}

// CheckModel says the model alias is one word the subagent file can hold as it is.
func (w Worker) CheckModel() error {
	if w.Model == "" || strings.ContainsAny(w.Model, " \t\n:#\"'") {
		return fmt.Errorf("%q: want a model alias such as haiku", w.Model)
	}
	return nil
}

// CheckTurns says the turn cap lets the worker take a turn.
func (w Worker) CheckTurns() error {
	if w.MaxTurns < 1 {
		return fmt.Errorf("%d: want 1 or more", w.MaxTurns)
	}
	return nil
}

// Persona is a persona file's front matter: the fields of the pack contract's personas.
type Persona struct {
	Name         string
	Description  string
	Tools        []string
	Effort       string
	OmitClaudeMd bool
	Model        string
	MaxTurns     int
	// Body is the text after the front matter.
	Body string
}

// LocalWorker is the built-in local-worker persona.
func LocalWorker() (Persona, error) {
	data, err := fs.ReadFile(builtinFS, workerPersona)
	if err != nil {
		return Persona{}, fmt.Errorf("built-in persona: %w", err)
	}
	return ParsePersona(data)
}

// ParsePersona reads a persona file: front matter of one "key: value" a line between two ---
// lines (a list as [a, b]), then the text.
func ParsePersona(data []byte) (Persona, error) {
	text := string(data)
	if !strings.HasPrefix(text, "---\n") {
		return Persona{}, errors.New("a persona starts with --- and its front matter")
	}
	head, body, ok := strings.Cut(text[4:], "\n---\n")
	if !ok {
		return Persona{}, errors.New("the persona's front matter has no closing ---")
	}
	p := Persona{Body: body}
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(head))
	for n := 1; sc.Scan(); n++ {
		key, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			return Persona{}, fmt.Errorf("front matter line %d: want key: value", n)
		}
		if seen[key] {
			return Persona{}, fmt.Errorf("front matter line %d: %s given twice", n, key)
		}
		seen[key] = true
		var err error
		switch key {
		case "name":
			p.Name = value
		case "description":
			p.Description = value
		case "tools":
			p.Tools, err = flowList(value)
		case "effort":
			p.Effort = value
		case "omitClaudeMd":
			p.OmitClaudeMd, err = strconv.ParseBool(value)
		case "model":
			p.Model = value
		case "maxTurns":
			p.MaxTurns, err = strconv.Atoi(value)
		default:
			err = errors.New("not a persona field")
		}
		if err != nil {
			return Persona{}, fmt.Errorf("front matter line %d: %s: %w", n, key, err)
		}
	}
	if p.Name == "" || p.Description == "" {
		return Persona{}, errors.New("a persona needs a name and a description")
	}
	return p, nil
}

func flowList(v string) ([]string, error) {
	if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
		return nil, errors.New("want a list: [a, b]")
	}
	var out []string
	for item := range strings.SplitSeq(v[1:len(v)-1], ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out, nil
}

// WorkerFile is the Claude Code subagent file of the persona: its name and description, the
// tools given (as the host names them where the worker runs), the model alias and turn cap, the
// skill preloaded, and its prompt: the persona's opening paragraph and its charter.
func WorkerFile(p Persona, w Worker, names HostNames) ([]byte, error) {
	if len(w.Tools) == 0 {
		return nil, errors.New("a worker with no tools")
	}
	if err := w.CheckModel(); err != nil {
		return nil, err
	}
	if err := w.CheckTurns(); err != nil {
		return nil, err
	}
	tools := make([]string, len(w.Tools))
	for i, t := range w.Tools {
		tools[i] = names.ToolPrefix + t
	}
	desc, _ := json.Marshal(p.Description)
	var b bytes.Buffer
	fmt.Fprintf(&b, "---\nname: %s\ndescription: %s\ntools: %s\nmodel: %s\nmaxTurns: %d\nskills:\n  - %s\n---\n\n",
		p.Name, desc, strings.Join(tools, ", "), w.Model, w.MaxTurns, names.Skill)
	prompt, err := workerPrompt(p.Body)
	if err != nil {
		return nil, err
	}
	b.WriteString(prompt)
	return b.Bytes(), nil
}

// workerPrompt is the persona's opening paragraph (under its title) and the worker's sections.
func workerPrompt(body string) (string, error) {
	sections := map[string]string{}
	var intro string
	parts := strings.Split("\n"+body, "\n## ")
	for i, part := range parts {
		if i == 0 {
			_, after, _ := strings.Cut(part, "\n# ")
			_, intro, _ = strings.Cut(after, "\n")
			continue
		}
		title, text, _ := strings.Cut(part, "\n")
		sections["## "+title] = strings.TrimSpace(text)
	}
	out := []string{strings.TrimSpace(intro)}
	for _, s := range workerSections {
		text, ok := sections[s]
		if !ok {
			return "", fmt.Errorf("the persona has no %q section", s)
		}
		out = append(out, s+"\n\n"+text)
	}
	return strings.Join(out, "\n\n") + "\n", nil
}

// planWorker plans the worker's subagent file at rel. One that differs from what init writes (a
// person's own, or one written with another model or turn cap) is kept and said so; force
// replaces it.
func planWorker(at installDir, rel string, w Worker, names HostNames, force bool) (plannedWrite, error) {
	p, err := LocalWorker()
	if err != nil {
		return plannedWrite{}, err
	}
	content, err := WorkerFile(p, w, names)
	if err != nil {
		return plannedWrite{}, err
	}
	plan, err := planOwned(at, rel, content, force)
	var changed *ChangedFileError
	if errors.As(err, &changed) {
		return plannedWrite{final: plan.final, action: InitAction{File: changed.File, Action: "kept",
			Note: fmt.Sprintf("line %d differs from what locum init writes: yours is kept; %s replaces it", changed.Line, at.force)}}, nil
	}
	return plan, err
}
