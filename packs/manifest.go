package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/spec"
	"github.com/locumdev/locum/untrusted"
)

// Manifest is a pack.json, as spec/pack.schema.json describes it.
type Manifest struct {
	Portulan struct {
		Pack    string `json:"pack"`
		Version string `json:"version,omitempty"`
	} `json:"portulan"`
	Name        string      `json:"name"`
	Category    string      `json:"category"`
	Summary     string      `json:"summary,omitempty"`
	Doc         string      `json:"doc,omitempty"`
	Contributes Contributes `json:"contributes"`
}

// Contributes is what a pack adds to a workspace.
type Contributes struct {
	Skills   []string                              `json:"skills,omitempty"`
	Personas []string                              `json:"personas,omitempty"`
	Verify   []RecipeSpec                          `json:"verify,omitempty"`
	Gates    []Gate                                `json:"gates,omitempty"`
	Modes    map[string]map[string]json.RawMessage `json:"modes,omitempty"`
	Roles    map[string]Role                       `json:"roles,omitempty"`
	// Workflows are named chains of steps (contract 1.2), run by locum run.
	Workflows map[string]Workflow `json:"workflows,omitempty"`
}

// RecipeSpec is a verify recipe as a manifest or workspace declares it.
type RecipeSpec struct {
	ID       string   `json:"id"`
	Run      string   `json:"run"`
	Requires []string `json:"requires,omitempty"`
	Doc      string   `json:"doc,omitempty"`
}

// Gate marks an action that needs a decision of the given tier.
type Gate struct {
	ID     string            `json:"id"`
	Tier   string            `json:"tier"`
	Action map[string]string `json:"action"`
	Reason string            `json:"reason"`
}

// ActionKind is the one key of the gate's action: write, read, shell or none.
func (g Gate) ActionKind() string {
	for k := range g.Action {
		return k
	}
	return ""
}

// Role names the eval tasks that earn it and the effort it runs at.
type Role struct {
	Tasks  []string `json:"tasks"`
	Effort string   `json:"effort,omitempty"`
}

// Pack is a validated manifest and where its files are.
type Pack struct {
	Manifest
	// Ref is category/name.
	Ref string
	// File names the manifest in messages: a path on disk, or builtin:<ref>/pack.json.
	File string
	// Dir is the pack's directory on disk; empty for a built-in pack.
	Dir string
	// Files holds the pack's files, rooted at the pack directory.
	Files fs.FS
}

// Builtin reports whether the pack ships inside the binary.
func (p *Pack) Builtin() bool { return p.Dir == "" }

// LoadBuiltin loads one of the packs shipped in the binary. Its manifest is not run through the
// schema on every start: it is part of the binary, and ValidateBuiltin (run by the tests and by
// --verify-offline) checks it against the schema in full.
func LoadBuiltin(ref string) (*Pack, error) {
	return loadBuiltin(nil, ref)
}

// ValidateBuiltin loads a built-in pack with every check, the schema included.
func ValidateBuiltin(v *schema.Validator, ref string) (*Pack, error) {
	return loadBuiltin(v, ref)
}

func loadBuiltin(v *schema.Validator, ref string) (*Pack, error) {
	sub, err := fs.Sub(builtinFS, ref)
	if err != nil {
		return nil, fmt.Errorf("built-in pack %s: %w", ref, err)
	}
	data, err := fs.ReadFile(sub, "pack.json")
	if err != nil {
		return nil, fmt.Errorf("built-in pack %s: %w", ref, err)
	}
	return load(v, data, "builtin:"+ref+"/pack.json", ref, "", sub)
}

// BuiltinRefs lists the built-in packs as category/name, sorted.
func BuiltinRefs() []string {
	var refs []string
	cats, _ := fs.ReadDir(builtinFS, ".")
	for _, c := range cats {
		if !c.IsDir() {
			continue
		}
		names, _ := fs.ReadDir(builtinFS, c.Name())
		for _, n := range names {
			if _, err := fs.Stat(builtinFS, path.Join(c.Name(), n.Name(), "pack.json")); err == nil {
				refs = append(refs, c.Name()+"/"+n.Name())
			}
		}
	}
	return refs
}

// LoadFile loads a pack.json on disk (or the pack.json inside a directory). display is the name
// used in messages, usually the path as the user wrote it.
func LoadFile(v *schema.Validator, file, display string) (*Pack, error) {
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		file = filepath.Join(file, "pack.json")
		display = filepath.Join(display, "pack.json")
	}
	data, err := untrusted.ReadFile(file, untrusted.ConfigCap)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", display, unwrapFileError(err))
	}
	abs, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	ref := filepath.Base(filepath.Dir(abs)) + "/" + filepath.Base(abs)
	return load(v, data, display, ref, abs, os.DirFS(abs))
}

// unwrapFileError keeps the reason of a file error, since the caller names the file already.
func unwrapFileError(err error) error {
	var fe *untrusted.FileError
	if errors.As(err, &fe) {
		return errors.New(fe.Reason)
	}
	var te *untrusted.TooLargeError
	if errors.As(err, &te) {
		return fmt.Errorf("over %d bytes, the most locum reads of a manifest", te.Limit)
	}
	return unwrapPathError(err)
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func load(v *schema.Validator, data []byte, display, ref, dir string, files fs.FS) (*Pack, error) {
	doc, err := schema.Decode(display, data)
	if err != nil {
		return nil, err
	}
	// The contract is judged first: a manifest written for a newer contract may use keys this
	// schema does not know, and the useful message is the version, not the unknown keys.
	if p := checkContract(display, doc); p != nil {
		return nil, &schema.InvalidError{File: display, Problems: []schema.Problem{*p}}
	}
	if v != nil {
		if err := v.ValidateValue(schema.Pack, display, doc); err != nil {
			return nil, err
		}
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	p := &Pack{Manifest: m, Ref: ref, File: display, Dir: dir, Files: files}
	var problems []schema.Problem
	add := func(ptr, format string, args ...any) {
		problems = append(problems, schema.Problem{File: display, Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	category, name, _ := strings.Cut(ref, "/")
	if m.Category != category {
		add("/category", "%q must equal the pack's category directory %q; move the pack to %s/%s/ or fix the category", m.Category, category, m.Category, name)
	}
	if m.Name != name {
		add("/name", "%q must equal the pack's directory %q; rename one to match the other", m.Name, name)
	}
	if contractBefore(m.Portulan.Pack, spec.PackContractModes) {
		if m.Contributes.Modes != nil {
			add("/contributes/modes", "modes need pack contract %s, but /portulan/pack says %s; set it to %q", spec.PackContractModes, m.Portulan.Pack, spec.PackContractModes)
		}
		if m.Contributes.Roles != nil {
			add("/contributes/roles", "roles need pack contract %s, but /portulan/pack says %s; set it to %q", spec.PackContractModes, m.Portulan.Pack, spec.PackContractModes)
		}
	}
	if m.Contributes.Workflows != nil && contractBefore(m.Portulan.Pack, spec.PackContractWorkflows) {
		add("/contributes/workflows", "workflows need pack contract %s, but /portulan/pack says %s; set it to %q", spec.PackContractWorkflows, m.Portulan.Pack, spec.PackContractWorkflows)
	}
	problems = append(problems, modeProblems(display, "/contributes/modes", m.Contributes.Modes)...)
	problems = append(problems, workflowProblems(display, m.Contributes.Workflows)...)
	problems = append(problems, p.checkPaths()...)
	seen := map[string]int{}
	for i, r := range m.Contributes.Verify {
		if j, dup := seen[r.ID]; dup {
			add(fmt.Sprintf("/contributes/verify/%d/id", i), "recipe id %q is declared twice (also /contributes/verify/%d); give each recipe its own id", r.ID, j)
			continue
		}
		seen[r.ID] = i
	}
	if len(problems) > 0 {
		return nil, &schema.InvalidError{File: display, Problems: problems}
	}
	return p, nil
}

// checkContract refuses a contract this build does not know, by name.
func checkContract(display string, doc any) *schema.Problem {
	obj, _ := doc.(map[string]any)
	portulan, _ := obj["portulan"].(map[string]any)
	version, _ := portulan["pack"].(string)
	major, minor, ok := parseContract(version)
	if !ok {
		return nil // the schema names the malformed value
	}
	lmaj, lmin, _ := parseContract(spec.PackContractLatest)
	if major > lmaj || (major == lmaj && minor > lmin) {
		return &schema.Problem{File: display, Pointer: "/portulan/pack", Message: fmt.Sprintf(
			"pack contract %s is newer than this locum knows (%s and older); upgrade locum to use this pack", version, spec.PackContractLatest)}
	}
	if major < 1 {
		return &schema.Problem{File: display, Pointer: "/portulan/pack", Message: fmt.Sprintf(
			"pack contract %s is not one locum knows; write %q or %q", version, spec.PackContractPortulan, spec.PackContractLatest)}
	}
	return nil
}

func parseContract(s string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(s, ".")
	if !found {
		return 0, 0, false
	}
	ma, err1 := strconv.Atoi(a)
	mi, err2 := strconv.Atoi(b)
	return ma, mi, err1 == nil && err2 == nil
}

func contractBefore(version, than string) bool {
	ma, mi, ok := parseContract(version)
	ta, ti, _ := parseContract(than)
	return ok && (ma < ta || (ma == ta && mi < ti))
}

// checkPaths makes sure every path the manifest names stays inside the pack, symbolic links
// resolved, and exists.
func (p *Pack) checkPaths() []schema.Problem {
	type named struct{ ptr, rel string }
	var paths []named
	if p.Doc != "" {
		paths = append(paths, named{"/doc", p.Doc})
	}
	for i, s := range p.Contributes.Skills {
		paths = append(paths, named{fmt.Sprintf("/contributes/skills/%d", i), s})
	}
	for i, s := range p.Contributes.Personas {
		paths = append(paths, named{fmt.Sprintf("/contributes/personas/%d", i), s})
	}
	for i, r := range p.Contributes.Verify {
		if r.Doc != "" {
			paths = append(paths, named{fmt.Sprintf("/contributes/verify/%d/doc", i), r.Doc})
		}
	}
	var problems []schema.Problem
	for _, n := range paths {
		if msg := p.containPath(n.rel); msg != "" {
			problems = append(problems, schema.Problem{File: p.File, Pointer: n.ptr, Message: msg})
		}
	}
	return problems
}

func (p *Pack) containPath(rel string) string {
	clean := path.Clean(strings.TrimSuffix(rel, "/"))
	if !fs.ValidPath(clean) || clean == "." {
		return fmt.Sprintf("%q escapes the pack; name a path inside the pack directory", rel)
	}
	if p.Builtin() {
		if _, err := fs.Stat(p.Files, clean); err != nil {
			return fmt.Sprintf("%q does not exist in the pack", rel)
		}
		return ""
	}
	root, err := filepath.EvalSymlinks(p.Dir)
	if err != nil {
		return fmt.Sprintf("cannot resolve the pack directory: %v", err)
	}
	target, err := filepath.EvalSymlinks(filepath.Join(p.Dir, filepath.FromSlash(clean)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Sprintf("%q does not exist in the pack; create it or remove the entry", rel)
		}
		return fmt.Sprintf("%q cannot be resolved: %v", rel, unwrapPathError(err))
	}
	inside, err := filepath.Rel(root, target)
	if err != nil || !filepath.IsLocal(inside) {
		return fmt.Sprintf("%q resolves to %s, outside the pack; keep the pack's files inside its directory", rel, target)
	}
	if strings.HasSuffix(rel, "/") {
		if st, err := os.Stat(target); err == nil && !st.IsDir() {
			return fmt.Sprintf("%q must be a directory", rel)
		}
	}
	return ""
}

// modeValue renders a mode default as the text a flag or environment variable would carry.
func modeValue(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
