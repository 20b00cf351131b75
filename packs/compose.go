package packs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// Recipe is a verify recipe of the composition, named <category>/<name>:<id>, or workspace:<id>
// for the workspace's own.
type Recipe struct {
	Name     string
	ID       string
	Run      string
	Requires []string
	// Pack is the pack that declared the recipe; nil for a workspace recipe.
	Pack *Pack
}

// Composition is the workspace's packs, validated and composed in cascade order.
type Composition struct {
	Root      string
	Workspace *Workspace // nil when the repository has no workspace file
	// User is the operator's config; nil when there is none or the caller did not load it.
	User    *UserConfig
	Packs   []*Pack
	Recipes []Recipe
}

// Compose finds, validates and composes the packs of the workspace at root. Built-in packs are
// found first, then .locum/packs/<category>/<name>/.
func Compose(v *schema.Validator, root string) (*Composition, error) {
	ws, err := LoadWorkspace(v, root)
	if err != nil {
		return nil, err
	}
	c := &Composition{Root: root, Workspace: ws}
	refs := []string{DefaultPack}
	if ws != nil {
		refs = ws.Packs
	}
	var problems []schema.Problem
	for i, ref := range refs {
		p, err := FindPack(v, root, ref)
		if err != nil {
			var unknown *UnknownPackError
			if errors.As(err, &unknown) {
				problems = append(problems, schema.Problem{File: WorkspaceFile, Pointer: fmt.Sprintf("/packs/%d", i), Message: unknown.Error()})
				continue
			}
			return nil, err
		}
		c.Packs = append(c.Packs, p)
	}
	if len(problems) > 0 {
		return nil, &schema.InvalidError{File: WorkspaceFile, Problems: problems}
	}
	if err := c.composeRecipes(); err != nil {
		return nil, err
	}
	return c, nil
}

// UnknownPackError is a pack name that is neither built in nor in the workspace.
type UnknownPackError struct {
	Ref string
}

func (e *UnknownPackError) Error() string {
	return fmt.Sprintf("unknown pack %q: not built in (%s) and no %s; fix the name or add the pack there",
		e.Ref, strings.Join(BuiltinRefs(), ", "), filepath.ToSlash(filepath.Join(".locum/packs", e.Ref, "pack.json")))
}

// FindPack loads the pack category/name: built in if locum ships it, else from the workspace.
func FindPack(v *schema.Validator, root, ref string) (*Pack, error) {
	for _, b := range BuiltinRefs() {
		if b == ref {
			return LoadBuiltin(ref)
		}
	}
	rel := filepath.Join(".locum", "packs", filepath.FromSlash(ref))
	file := filepath.Join(root, rel, "pack.json")
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		return nil, &UnknownPackError{Ref: ref}
	}
	// A pack folder, or its pack.json, that is a link out of the repository would compose a
	// pack nobody committed.
	real, err := untrusted.Confine(root, filepath.Join(rel, "pack.json"))
	if err != nil {
		return nil, err
	}
	return LoadFile(v, real, filepath.Join(rel, "pack.json"))
}

// composeRecipes names every recipe and refuses an id that two sources declare: a later one would
// silently shadow the earlier, and the recipe a user asks for by id would not be the one that ran.
func (c *Composition) composeRecipes() error {
	owner := map[string]string{}
	var problems []schema.Problem
	claim := func(id, where, file, ptr string) bool {
		if prev, ok := owner[id]; ok {
			problems = append(problems, schema.Problem{File: file, Pointer: ptr, Message: fmt.Sprintf(
				"recipe id %q is already declared by %s and would shadow it; rename one of them", id, prev)})
			return false
		}
		owner[id] = where
		return true
	}
	for _, p := range c.Packs {
		for i, r := range p.Contributes.Verify {
			if !claim(r.ID, p.Ref, p.File, fmt.Sprintf("/contributes/verify/%d/id", i)) {
				continue
			}
			run := r.Run
			if !p.Builtin() {
				run = strings.ReplaceAll(run, "${PACK_ROOT}", shellQuote(p.Dir))
			}
			c.Recipes = append(c.Recipes, Recipe{Name: p.Ref + ":" + r.ID, ID: r.ID, Run: run, Requires: r.Requires, Pack: p})
		}
	}
	if c.Workspace != nil {
		for i, r := range c.Workspace.Verify {
			if !claim(r.ID, WorkspaceFile, WorkspaceFile, fmt.Sprintf("/verify/%d/id", i)) {
				continue
			}
			c.Recipes = append(c.Recipes, Recipe{Name: "workspace:" + r.ID, ID: r.ID, Run: r.Run, Requires: r.Requires})
		}
	}
	if len(problems) > 0 {
		return &schema.InvalidError{File: problems[0].File, Problems: problems}
	}
	return nil
}

// NeedsPackRoot reports whether the recipe still names ${PACK_ROOT}: a built-in pack's recipe,
// whose files must be written out before it can run.
func (r Recipe) NeedsPackRoot() bool { return strings.Contains(r.Run, "${PACK_ROOT}") }

// WithPackRoot returns the command with ${PACK_ROOT} replaced by dir.
func (r Recipe) WithPackRoot(dir string) string {
	return strings.ReplaceAll(r.Run, "${PACK_ROOT}", shellQuote(dir))
}

// Materialize writes the pack's files under dir, for a built-in pack whose recipe needs them on
// disk.
func (p *Pack) Materialize(dir string) error {
	return fs.WalkDir(p.Files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(p.Files, name)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		return os.WriteFile(target, data, mode)
	})
}

// Find returns the recipe a user named, by full name or by bare id.
func (c *Composition) Find(name string) (Recipe, bool) {
	for _, r := range c.Recipes {
		if r.Name == name || r.ID == name {
			return r, true
		}
	}
	return Recipe{}, false
}

// Pack returns the composed pack with the given category/name.
func (c *Composition) Pack(ref string) (*Pack, bool) {
	for _, p := range c.Packs {
		if p.Ref == ref {
			return p, true
		}
	}
	return nil, false
}

// Roles returns the roles every composed pack declares, a later pack's declaration winning.
func (c *Composition) Roles() map[string]Role {
	roles := map[string]Role{}
	for _, p := range c.Packs {
		for name, r := range p.Contributes.Roles {
			roles[name] = r
		}
	}
	return roles
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
