package packs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// SkillInstallPath is where init installs the delegate-local skill for Claude Code.
const SkillInstallPath = ".claude/skills/delegate-local/SKILL.md"

// HostConfigPath is the project-scoped MCP host config init writes; Claude Code, Cursor and other
// hosts read it at the repository root.
const HostConfigPath = ".mcp.json"

// hostConfig starts locum mcp from the repository root, where the host runs project servers.
var hostConfig = []byte(`{
  "mcpServers": {
    "locum": {
      "command": "locum",
      "args": ["mcp"]
    }
  }
}
`)

// maxHostConfig bounds the read of a .mcp.json already there: it is the repository's, not ours.
const maxHostConfig = 256 << 10

// InitAction says what init did with one file.
type InitAction struct {
	File   string
	Action string // "created", "unchanged", "overwritten", "kept"
	Note   string
}

// ErrRefused marks an init that stopped rather than replace or extend a file the user owns.
var ErrRefused = errors.New("init refused")

// ChangedFileError is a file init would write that already holds something else.
type ChangedFileError struct {
	File string
	Line int // first line that differs, 1-based
}

// Is makes a ChangedFileError an ErrRefused.
func (e *ChangedFileError) Is(target error) bool { return target == ErrRefused }

func (e *ChangedFileError) Error() string {
	return fmt.Sprintf("%s: line %d: differs from what locum init writes; keep your version, or run locum init --force to replace it", e.File, e.Line)
}

// Init sets up a workspace at root that composes tools/local-llm and installs the delegate-local
// skill. Run again it changes nothing; it replaces a file the user changed only with force.
func Init(v *schema.Validator, root string, force bool) ([]InitAction, error) {
	var actions []InitAction
	wsAction, err := initWorkspace(v, root, force)
	if err != nil {
		return nil, err
	}
	actions = append(actions, wsAction)
	skill, err := fs.ReadFile(builtinFS, DefaultPack+"/skills/delegate-local/SKILL.md")
	if err != nil {
		return nil, fmt.Errorf("built-in skill: %w", err)
	}
	a, err := writeOwned(root, SkillInstallPath, skill, force)
	if err != nil {
		return nil, err
	}
	actions = append(actions, a)
	if a, err = initHostConfig(root, force); err != nil {
		return nil, err
	}
	return append(actions, a), nil
}

// initHostConfig writes .mcp.json with a locum server. A file that already runs locum mcp is
// kept as it is, other servers and all; one that does not is refused with what to add, unless
// force replaces it.
func initHostConfig(root string, force bool) (InitAction, error) {
	// The repository's file: regular, bounded, not a link out of the repository.
	have, err := untrusted.ReadFileIn(root, HostConfigPath, maxHostConfig)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeOwned(root, HostConfigPath, hostConfig, force)
	case err == nil && bytes.Equal(have, hostConfig):
		return InitAction{File: HostConfigPath, Action: "unchanged"}, nil
	case force:
		// Replace the file (or a link in its place) without reading further what is there.
		if err := atomicfile.Write(filepath.Join(root, HostConfigPath), hostConfig, 0o644); err != nil {
			return InitAction{}, fmt.Errorf("%s: %w", HostConfigPath, err)
		}
		return InitAction{File: HostConfigPath, Action: "overwritten"}, nil
	case err != nil:
		return InitAction{}, refused("%v; fix it, or run locum init --force to replace it", err)
	}
	runs, err := runsLocumMCP(have)
	if err != nil {
		return InitAction{}, refused("%s: %v; fix it, or run locum init --force to replace it", HostConfigPath, err)
	}
	if runs {
		return InitAction{File: HostConfigPath, Action: "kept", Note: "already runs locum mcp"}, nil
	}
	return InitAction{}, refused(`%s: /mcpServers/locum: does not run locum mcp; add "locum": {"command": "locum", "args": ["mcp"]} to /mcpServers, or run locum init --force to replace the file`, HostConfigPath)
}

// runsLocumMCP reports whether a host config's locum server runs `locum mcp`. A key given twice
// is refused: two readers could take different ones.
func runsLocumMCP(data []byte) (bool, error) {
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := untrusted.Unmarshal(data, &cfg); err != nil {
		return false, err
	}
	srv, ok := cfg.MCPServers["locum"]
	return ok && filepath.Base(srv.Command) == "locum" && len(srv.Args) > 0 && srv.Args[0] == "mcp", nil
}

func initWorkspace(v *schema.Validator, root string, force bool) (InitAction, error) {
	want := []byte("{\n  \"packs\": [\"" + DefaultPack + "\"]\n}\n")
	ws, err := LoadWorkspace(v, root)
	var invalid *schema.InvalidError
	var syntax *schema.SyntaxError
	switch {
	case err == nil && ws == nil:
		return writeOwned(root, WorkspaceFile, want, force)
	case err == nil && slices.Contains(ws.Packs, DefaultPack):
		return InitAction{File: WorkspaceFile, Action: "kept", Note: "already composes " + DefaultPack}, nil
	case force:
		return writeOwned(root, WorkspaceFile, want, true)
	case err == nil:
		return InitAction{}, refused("%s: /packs: does not compose %s; add %q to /packs, or run locum init --force to replace the file", WorkspaceFile, DefaultPack, DefaultPack)
	case errors.As(err, &invalid), errors.As(err, &syntax):
		return InitAction{}, refused("%v\nfix %s, or run locum init --force to replace it", err, WorkspaceFile)
	default:
		return InitAction{}, err
	}
}

type refusal struct{ msg string }

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == ErrRefused }

func refused(format string, args ...any) error { return &refusal{msg: fmt.Sprintf(format, args...)} }

// writeOwned writes content to root/rel unless a different file is already there.
func writeOwned(root, rel string, content []byte, force bool) (InitAction, error) {
	// A committed link (.claude -> elsewhere) must not aim the write out of the repository.
	file, err := untrusted.Confine(root, filepath.FromSlash(rel))
	if err != nil {
		return InitAction{}, err
	}
	have, err := untrusted.ReadFile(file, untrusted.ConfigCap)
	switch {
	case err == nil && bytes.Equal(have, content):
		return InitAction{File: rel, Action: "unchanged"}, nil
	case err == nil && !force:
		return InitAction{}, &ChangedFileError{File: rel, Line: firstDifferentLine(have, content)}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return InitAction{}, fmt.Errorf("%s: %w", rel, unwrapPathError(err))
	}
	action := "created"
	if err == nil {
		action = "overwritten"
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return InitAction{}, fmt.Errorf("%s: %w", rel, unwrapPathError(err))
	}
	if err := atomicfile.Write(file, content, 0o644); err != nil {
		return InitAction{}, fmt.Errorf("%s: %w", rel, err)
	}
	return InitAction{File: rel, Action: action}, nil
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
