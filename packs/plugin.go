package packs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/locumdev/locum/untrusted"
)

// The Claude Code plugin that locum init --plugin DIR writes: the delegate-local skill, the local
// worker and locum's MCP server as one plugin, installed once for every repository. Its layout,
// its manifest and the marketplace file beside it are Claude Code's, as documented at
// https://code.claude.com/docs/en/plugins-reference and
// https://code.claude.com/docs/en/plugin-marketplaces.

// PluginName is the plugin's name: the namespace of its skill and agent (locum:delegate-local,
// locum:local-worker) and part of its tools' names.
const PluginName = "locum"

// PluginMarketplace is the one-plugin marketplace written beside the plugin, so that a person
// installs it with Claude Code's own commands: /plugin marketplace add DIR, then
// /plugin install locum@locum-local.
const PluginMarketplace = "locum-local"

// The plugin's files, relative to its directory: the manifest and the marketplace in
// .claude-plugin/, every component at the plugin's root.
const (
	PluginManifestPath    = ".claude-plugin/plugin.json"
	PluginMarketplacePath = ".claude-plugin/marketplace.json"
	PluginSkillPath       = "skills/" + WorkerSkill + "/SKILL.md"
	PluginWorkerPath      = "agents/" + workerFileName
	PluginServersPath     = ".mcp.json"
)

// ServerDirFlag is locum mcp's flag naming the directory to serve in place of the working
// directory.
const ServerDirFlag = "dir"

// pluginServerArgs start locum mcp in the project Claude Code opened, wherever Claude Code starts
// the plugin's server: it substitutes ${CLAUDE_PROJECT_DIR} in a plugin server's args
// (https://code.claude.com/docs/en/plugins-reference#environment-variables).
var pluginServerArgs = append(slices.Clone(serverArgs), "--"+ServerDirFlag, "${CLAUDE_PROJECT_DIR}")

// PluginDirError is a plugin directory named where a file is.
type PluginDirError struct{ Dir string }

func (e *PluginDirError) Error() string {
	return fmt.Sprintf("%s is a file, not a directory: name a directory for the plugin, new or holding a plugin locum wrote", untrusted.Escape(e.Dir))
}

// pluginManifest is the plugin's .claude-plugin/plugin.json: a name, the only field Claude Code
// requires, and the version and description it shows.
type pluginManifest struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

// pluginMarketplace is the .claude-plugin/marketplace.json that lists the plugin, whose source is
// the marketplace's own directory.
type pluginMarketplace struct {
	Name  string `json:"name"`
	Owner struct {
		Name string `json:"name"`
	} `json:"owner"`
	Plugins []pluginEntry `json:"plugins"`
}

type pluginEntry struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Description string `json:"description"`
}

// InitPlugin writes the skill, the local worker and locum's MCP server into dir as one Claude
// Code plugin, with a marketplace that lists it, by the rules Init keeps: run again it changes
// nothing, a file a person changed is replaced only with force (a worker of their own is kept
// and said so), and a refusal names each conflict and writes nothing. A dir that does not exist
// is made. locumVersion is the binary's version, which the plugin's version starts with.
func InitPlugin(dir string, force bool, worker Worker, locumVersion string) ([]InitAction, error) {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return nil, &PluginDirError{Dir: dir}
	case errors.Is(err, fs.ErrNotExist):
		// Nothing in a new directory can conflict, so making it first writes nothing a refusal
		// would have to take back.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%s: %w", untrusted.Escape(dir), unwrapPathError(err))
		}
	case err != nil:
		return nil, fmt.Errorf("%s: %w", untrusted.Escape(dir), unwrapPathError(err))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	at := installDir{root: abs, shown: dir, force: "locum init --plugin " + shellQuote(dir) + " --force"}
	skill, err := fs.ReadFile(builtinFS, builtinSkill)
	if err != nil {
		return nil, fmt.Errorf("built-in skill: %w", err)
	}
	pack, err := defaultPack()
	if err != nil {
		return nil, fmt.Errorf("the default pack: %w", err)
	}
	// The components are planned first: the manifest's version is made from what they hold once
	// init is done, kept files included.
	var parts []plannedPart
	component := func(rel string, plan func() (plannedWrite, error)) func() (plannedWrite, error) {
		return func() (plannedWrite, error) {
			p, err := plan()
			parts = append(parts, plannedPart{rel: rel, final: p.final})
			return p, err
		}
	}
	manifest := func(version string) []byte {
		return indentedJSON(pluginManifest{Name: PluginName, Version: version, Description: pack.Summary})
	}
	market := pluginMarketplace{Name: PluginMarketplace, Plugins: []pluginEntry{{Name: PluginName, Source: "./", Description: pack.Summary}}}
	market.Owner.Name = PluginName
	return commit(
		component(PluginSkillPath, func() (plannedWrite, error) { return planOwned(at, PluginSkillPath, skill, force) }),
		component(PluginWorkerPath, func() (plannedWrite, error) {
			return planWorker(at, PluginWorkerPath, worker, PluginNames, force)
		}),
		component(PluginServersPath, func() (plannedWrite, error) {
			return planOwned(at, PluginServersPath, mcpConfig(pluginServerArgs), force)
		}),
		func() (plannedWrite, error) {
			return planManifest(at, manifest, pluginVersion(locumVersion, parts), force)
		},
		func() (plannedWrite, error) { return planOwned(at, PluginMarketplacePath, indentedJSON(market), force) },
	)
}

// plannedPart is one of the plugin's components as it will be once init is done.
type plannedPart struct {
	rel   string
	final []byte
}

// planManifest plans the manifest of the given version. A manifest that is locum's but for its
// version is replaced without force: the files it versions changed since it was written (a
// worker kept, a new locum), and Claude Code takes a plugin's new files only under a new version.
func planManifest(at installDir, manifest func(version string) []byte, version string, force bool) (plannedWrite, error) {
	content := manifest(version)
	plan, err := planOwned(at, PluginManifestPath, content, force)
	var changed *ChangedFileError
	if !errors.As(err, &changed) {
		return plan, err
	}
	var was struct {
		Version string `json:"version"`
	}
	if untrusted.Unmarshal(plan.final, &was) != nil || !bytes.Equal(manifest(was.Version), plan.final) {
		return plan, err
	}
	return plannedWrite{file: plan.file, content: content, final: content, action: InitAction{File: changed.File, Action: "updated",
		Note: fmt.Sprintf("version %s, was %s: the plugin's files changed", version, untrusted.Escape(was.Version))}}, nil
}

// semver is a semantic version without build metadata (https://semver.org), as the plugin's
// version is to be; a pre-release's identifiers are not held to semver's no-leading-zero rule,
// as Claude Code's own content-hash versions are not.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// pluginVersion is locum's version (0.0.0 for a build that has none) and a digest of the
// plugin's files, joined as Claude Code joins a version and a content hash: Claude Code updates
// an installed plugin only when its version changes, so a plugin written again with other files
// gets another one.
func pluginVersion(locumVersion string, parts []plannedPart) string {
	core, _, _ := strings.Cut(strings.TrimPrefix(locumVersion, "v"), "+")
	if !semver.MatchString(core) {
		core = "0.0.0"
	}
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%s %d\n", p.rel, len(p.final))
		h.Write(p.final)
	}
	return core + "-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// indentedJSON is v as the JSON files init writes: indented by two spaces, with a final newline.
func indentedJSON(v any) []byte {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("packs: %T does not marshal: %v", v, err))
	}
	return append(out, '\n')
}
