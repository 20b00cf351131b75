package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// SkillInstallPath is where init installs the delegate-local skill for Claude Code.
const SkillInstallPath = ".claude/skills/" + WorkerSkill + "/SKILL.md"

// builtinSkill is the delegate-local skill in the default pack.
const builtinSkill = DefaultPack + "/skills/" + WorkerSkill + "/SKILL.md"

// HostConfigPath is the project-scoped MCP host config init writes; Claude Code, Cursor and other
// hosts read it at the repository root.
const HostConfigPath = ".mcp.json"

// ServerName is the name a host config gives locum's MCP server.
const ServerName = "locum"

// serverCommand and serverArgs start locum's MCP server as a host runs it: the locum on the
// person's PATH, serving stdio.
var (
	serverCommand = "locum"
	serverArgs    = []string{"mcp"}
)

// hostConfig starts locum mcp from the repository root, where the host runs project servers.
var hostConfig = mcpConfig(serverArgs)

// mcpConfig is a host config with one server, locum's, started with args: the file init writes
// at a repository's root and into a plugin.
func mcpConfig(args []string) []byte {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = jsonString(a)
	}
	return []byte("{\n  \"mcpServers\": {\n    " + jsonString(ServerName) + ": {\n" +
		"      \"command\": " + jsonString(serverCommand) + ",\n" +
		"      \"args\": [" + strings.Join(quoted, ", ") + "]\n    }\n  }\n}\n")
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	out, _ := json.Marshal(s) // a string always marshals
	return string(out)
}

// maxHostConfig bounds the read of a .mcp.json already there: it is the repository's, not ours.
const maxHostConfig = 256 << 10

// InitAction says what init did with one file.
type InitAction struct {
	File   string
	Action string // "created", "unchanged", "overwritten", "updated", "kept"
	Note   string
}

// installDir is where init writes its files: the root their paths are relative to, how a message
// names one, and the command that replaces a file a person changed.
type installDir struct {
	root string
	// shown is the root as a message names it: "" in a repository, where a file is named by its
	// path in it; the directory as the person gave it for a plugin.
	shown string
	// force is the command that replaces a file that differs from what init writes.
	force string
}

// repository is the place of init's files in the repository at root.
func repository(root string) installDir { return installDir{root: root, force: "locum init --force"} }

// name is how a message names the file at rel.
func (p installDir) name(rel string) string {
	if p.shown == "" {
		return rel
	}
	return filepath.ToSlash(filepath.Join(p.shown, filepath.FromSlash(rel)))
}

// ErrRefused marks an init that stopped rather than replace or extend a file the user owns.
var ErrRefused = errors.New("init refused")

// ChangedFileError is a file init would write that already holds something else.
type ChangedFileError struct {
	File string
	Line int // first line that differs, 1-based
	// Force is the command that replaces it.
	Force string
}

// Is makes a ChangedFileError an ErrRefused.
func (e *ChangedFileError) Is(target error) bool { return target == ErrRefused }

func (e *ChangedFileError) Error() string {
	return fmt.Sprintf("%s: line %d: differs from what locum init writes; keep your version, or run %s to replace it", e.File, e.Line, e.Force)
}

// Init sets up a workspace at root that composes tools/local-llm, installs the delegate-local
// skill and the local worker (a host subagent whose only tools are locum's), and adds a locum
// server to the host config. Run again it changes nothing; it replaces a
// file the user changed only with force. It is all or nothing: every file is checked before any
// is written, and a refusal names each conflict and writes nothing.
func Init(v *schema.Validator, root string, force bool, worker Worker) ([]InitAction, error) {
	skill, err := fs.ReadFile(builtinFS, builtinSkill)
	if err != nil {
		return nil, fmt.Errorf("built-in skill: %w", err)
	}
	at := repository(root)
	return commit(
		func() (plannedWrite, error) { return planWorkspace(v, root, force) },
		func() (plannedWrite, error) { return planOwned(at, SkillInstallPath, skill, force) },
		func() (plannedWrite, error) { return planHostConfig(root, force) },
		func() (plannedWrite, error) { return planWorker(at, WorkerInstallPath, worker, ProjectNames, force) },
	)
}

// commit runs every planner, then writes what they planned: all or nothing, since a refusal of
// any one names each conflict and writes no file.
func commit(planners ...func() (plannedWrite, error)) ([]InitAction, error) {
	var plans []plannedWrite
	var conflicts []error
	for _, plan := range planners {
		p, err := plan()
		switch {
		case errors.Is(err, ErrRefused):
			conflicts = append(conflicts, err)
		case err != nil:
			return nil, err
		default:
			plans = append(plans, p)
		}
	}
	if len(conflicts) == 1 {
		return nil, conflicts[0]
	}
	if len(conflicts) > 1 {
		return nil, &InitConflicts{Conflicts: conflicts}
	}
	var actions []InitAction
	for _, p := range plans {
		if p.content != nil {
			if err := os.MkdirAll(filepath.Dir(p.file), 0o755); err != nil {
				return actions, fmt.Errorf("%s: %w", p.action.File, unwrapPathError(err))
			}
			if err := atomicfile.Write(p.file, p.content, 0o644); err != nil {
				return actions, fmt.Errorf("%s: %w", p.action.File, err)
			}
		}
		actions = append(actions, p.action)
	}
	return actions, nil
}

// InitConflicts is an init that refused over more than one file: each is named, none written.
type InitConflicts struct{ Conflicts []error }

func (e *InitConflicts) Error() string {
	lines := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		lines[i] = c.Error()
	}
	return strings.Join(lines, "\n")
}

// Is makes InitConflicts an ErrRefused.
func (e *InitConflicts) Is(target error) bool { return target == ErrRefused }

// plannedWrite is one file init would write: content nil when it is left as it is.
type plannedWrite struct {
	file    string
	content []byte
	action  InitAction
	// final is what the file holds once init is done: content, or what was there and is left.
	final []byte
}

// planHostConfig plans .mcp.json with a locum server. A file that already runs locum mcp is
// kept as it is. Otherwise the locum server is added, or a locum entry that runs something else
// is replaced, and every other server and key is kept. A file that cannot be read as a host
// config is refused; force replaces it, since nothing in it could be kept.
func planHostConfig(root string, force bool) (plannedWrite, error) {
	// The repository's file: regular, bounded, not a link out of the repository.
	have, err := untrusted.ReadFileIn(root, HostConfigPath, maxHostConfig)
	file := filepath.Join(root, HostConfigPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return planOwned(repository(root), HostConfigPath, hostConfig, force)
	case err == nil && bytes.Equal(have, hostConfig):
		return plannedWrite{action: InitAction{File: HostConfigPath, Action: "unchanged"}}, nil
	case err != nil && force:
		// Replace the file (or a link in its place) without reading further what is there.
		return plannedWrite{file: file, content: hostConfig, action: InitAction{File: HostConfigPath, Action: "overwritten"}}, nil
	case err != nil:
		return plannedWrite{}, refused("%v; fix it, or run locum init --force to replace it", err)
	}
	runs, err := runsLocumMCP(have)
	if err == nil && runs {
		return plannedWrite{action: InitAction{File: HostConfigPath, Action: "kept", Note: "already runs locum mcp"}}, nil
	}
	var merged []byte
	var hadLocum bool
	var others int
	if err == nil {
		merged, hadLocum, others, err = withLocumServer(have)
	}
	if err == nil && hadLocum && !force {
		// A locum entry of the user's own (another binary, flags, an env): never replaced
		// without --force, and then only that entry.
		return plannedWrite{}, refused(`%s: /mcpServers/locum: does not run plain locum mcp; keep your entry, or run locum init --force to replace that entry (the other servers are kept)`, HostConfigPath)
	}
	if err != nil {
		if force {
			return plannedWrite{file: file, content: hostConfig, action: InitAction{File: HostConfigPath, Action: "overwritten"}}, nil
		}
		return plannedWrite{}, refused("%s: %v; fix it, or run locum init --force to replace it", HostConfigPath, err)
	}
	note := "added the locum server"
	if hadLocum {
		note = "replaced a locum server that did not run locum mcp"
	}
	if others > 0 {
		note += fmt.Sprintf("; kept %d other server(s)", others)
	}
	return plannedWrite{file: file, content: merged, action: InitAction{File: HostConfigPath, Action: "updated", Note: note}}, nil
}

// withLocumServer is a host config with mcpServers.locum set to run locum mcp, every other key
// kept; it says whether a locum server was there and how many others there are.
func withLocumServer(data []byte) (out []byte, hadLocum bool, others int, err error) {
	var doc map[string]json.RawMessage
	if err := untrusted.Unmarshal(data, &doc); err != nil {
		return nil, false, 0, err
	}
	if doc == nil {
		return nil, false, 0, errors.New("not a JSON object")
	}
	for k := range doc {
		// encoding/json reads a key like this as mcpServers and a host may not: adding the real
		// one beside it would leave two readings.
		if k != "mcpServers" && strings.EqualFold(k, "mcpServers") {
			return nil, false, 0, fmt.Errorf("/%s: a key that differs from mcpServers only in letter case", k)
		}
	}
	servers := map[string]json.RawMessage{}
	if raw, ok := doc["mcpServers"]; ok {
		if err := json.Unmarshal(raw, &servers); err != nil || servers == nil {
			return nil, false, 0, errors.New("/mcpServers: not a JSON object")
		}
	}
	for k := range servers {
		// Adding locum beside a server named like it would leave the config two keys a host that
		// folds case reads as one, and locum's own reader refuses it.
		if k != ServerName && strings.EqualFold(k, ServerName) {
			return nil, false, 0, fmt.Errorf("/mcpServers/%s: a key that differs from %s only in letter case", k, ServerName)
		}
	}
	_, hadLocum = servers[ServerName]
	others = len(servers)
	if hadLocum {
		others--
	}
	entry, err := json.Marshal(struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{serverCommand, serverArgs})
	if err != nil {
		return nil, false, 0, err
	}
	servers[ServerName] = entry
	raw, err := json.Marshal(servers)
	if err != nil {
		return nil, false, 0, err
	}
	doc["mcpServers"] = raw
	if out, err = json.MarshalIndent(doc, "", "  "); err != nil {
		return nil, false, 0, err
	}
	return append(out, '\n'), hadLocum, others, nil
}

// runsLocumMCP reports whether a host config's locum server runs locum mcp as an operator would
// install it: the command locum on PATH, or an absolute path to a binary named locum, with the
// arguments mcp and at most --allow-model. A relative command (a binary the repository ships)
// or a flag that widens a rail (--allow-remote, --base-url) is not that: the file is the
// repository's, and init must not call it locum's own. A key given twice is refused: two readers
// could take different ones.
func runsLocumMCP(data []byte) (bool, error) {
	var cfg struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := untrusted.Unmarshal(data, &cfg); err != nil {
		return false, err
	}
	raw, ok := cfg.MCPServers[ServerName]
	if !ok {
		return false, nil
	}
	var srv map[string]json.RawMessage
	if err := json.Unmarshal(raw, &srv); err != nil {
		return false, nil
	}
	var command string
	var args []string
	for k, v := range srv {
		var err error
		switch k {
		case "command":
			err = json.Unmarshal(v, &command)
		case "args":
			err = json.Unmarshal(v, &args)
		default:
			return false, nil // env, cwd or anything else: not the plain install
		}
		if err != nil {
			return false, nil
		}
	}
	if command != serverCommand && (!filepath.IsAbs(command) || filepath.Base(command) != serverCommand) {
		return false, nil
	}
	switch {
	case slices.Equal(args, serverArgs), slices.Equal(args, append(slices.Clone(serverArgs), "--allow-model")):
		return true, nil
	}
	return false, nil
}

func planWorkspace(v *schema.Validator, root string, force bool) (plannedWrite, error) {
	want := []byte("{\n  \"packs\": [\"" + DefaultPack + "\"]\n}\n")
	ws, err := LoadWorkspace(v, root)
	var invalid *schema.InvalidError
	var syntax *schema.SyntaxError
	switch {
	case err == nil && ws == nil:
		return planOwned(repository(root), WorkspaceFile, want, force)
	case err == nil && slices.Contains(ws.Packs, DefaultPack):
		return plannedWrite{action: InitAction{File: WorkspaceFile, Action: "kept", Note: "already composes " + DefaultPack}}, nil
	case force:
		return planOwned(repository(root), WorkspaceFile, want, true)
	case err == nil:
		return plannedWrite{}, refused("%s: /packs: does not compose %s; add %q to /packs, or run locum init --force to replace the file", WorkspaceFile, DefaultPack, DefaultPack)
	case errors.As(err, &invalid), errors.As(err, &syntax):
		return plannedWrite{}, refused("%v\nfix %s, or run locum init --force to replace it", err, WorkspaceFile)
	default:
		return plannedWrite{}, err
	}
}

type refusal struct{ msg string }

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == ErrRefused }

func refused(format string, args ...any) error { return &refusal{msg: fmt.Sprintf(format, args...)} }

// planOwned plans writing content to rel at p unless a different file is already there.
func planOwned(p installDir, rel string, content []byte, force bool) (plannedWrite, error) {
	// A committed link (.claude -> elsewhere) must not aim the write out of the repository.
	file, err := untrusted.Confine(p.root, filepath.FromSlash(rel))
	if err != nil {
		return plannedWrite{}, err
	}
	name := p.name(rel)
	have, err := untrusted.ReadFile(file, untrusted.ConfigCap)
	switch {
	case err == nil && bytes.Equal(have, content):
		return plannedWrite{action: InitAction{File: name, Action: "unchanged"}, final: have}, nil
	case err == nil && !force:
		return plannedWrite{file: file, final: have}, &ChangedFileError{File: name, Line: firstDifferentLine(have, content), Force: p.force}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return plannedWrite{}, fmt.Errorf("%s: %w", name, unwrapPathError(err))
	}
	action := "created"
	if err == nil {
		action = "overwritten"
	}
	return plannedWrite{file: file, content: content, action: InitAction{File: name, Action: action}, final: content}, nil
}

func firstDifferentLine(a, b []byte) int {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(al) && i < len(bl); i++ {
		if !bytes.Equal(al[i], bl[i]) {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}
