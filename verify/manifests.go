package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/schema"
)

func manifestChecks() []Check {
	return []Check{
		{Name: "manifests/builtin-packs-validate", Run: checkBuiltinPacks},
		{Name: "manifests/broken-manifest-names-pointer", Run: checkBrokenManifest},
		{Name: "manifests/newer-contract-refused", Run: checkNewerContract},
		{Name: "manifests/escaping-path-refused", Run: checkEscapingPath},
	}
}

func checkBuiltinPacks(context.Context, *Env) error {
	v, err := schema.New()
	if err != nil {
		return &CouldNotRunError{Err: err}
	}
	refs := packs.BuiltinRefs()
	if len(refs) == 0 {
		return errors.New("no built-in pack found")
	}
	for _, ref := range refs {
		if _, err := packs.ValidateBuiltin(v, ref); err != nil {
			return fmt.Errorf("built-in pack %s: %w", ref, err)
		}
	}
	return nil
}

// loadTemp writes a manifest into a temporary tools/<name>/ directory and loads it.
func loadTemp(manifest string, extra func(dir string) error) error {
	v, err := schema.New()
	if err != nil {
		return &CouldNotRunError{Err: err}
	}
	tmp, err := os.MkdirTemp("", "locum-check-")
	if err != nil {
		return &CouldNotRunError{Err: err}
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "packs", "tools", "probe")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &CouldNotRunError{Err: err}
	}
	if extra != nil {
		if err := extra(tmp); err != nil {
			return &CouldNotRunError{Err: err}
		}
	}
	file := filepath.Join(dir, "pack.json")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		return &CouldNotRunError{Err: err}
	}
	_, err = packs.LoadFile(v, file, "pack.json")
	return err
}

// wantProblem checks that err is a refusal naming pointer and containing want.
func wantProblem(err error, pointer, want string) error {
	var inv *schema.InvalidError
	if !errors.As(err, &inv) {
		return fmt.Errorf("want a refusal at %s, got %v", pointer, err)
	}
	for _, p := range inv.Problems {
		if p.Pointer == pointer && strings.Contains(p.Message, want) {
			return nil
		}
	}
	return fmt.Errorf("want a problem at %s mentioning %q, got: %v", pointer, want, inv)
}

func checkBrokenManifest(context.Context, *Env) error {
	err := loadTemp(`{"portulan":{"pack":"1.0"},"name":"probe","category":"tools","contributes":{"verify":[{"id":"Bad_Id","run":"true"}]}}`, nil)
	return wantProblem(err, "/contributes/verify/0/id", "Bad_Id")
}

func checkNewerContract(context.Context, *Env) error {
	err := loadTemp(`{"portulan":{"pack":"9.0"},"name":"probe","category":"tools","contributes":{}}`, nil)
	return wantProblem(err, "/portulan/pack", "newer than this locum knows")
}

func checkEscapingPath(context.Context, *Env) error {
	err := loadTemp(`{"portulan":{"pack":"1.0"},"name":"probe","category":"tools","contributes":{"personas":["outside.md"]}}`,
		func(tmp string) error {
			secret := filepath.Join(tmp, "secret.md")
			if err := os.WriteFile(secret, []byte("x"), 0o644); err != nil {
				return err
			}
			return os.Symlink(secret, filepath.Join(tmp, "packs", "tools", "probe", "outside.md"))
		})
	return wantProblem(err, "/contributes/personas/0", "outside the pack")
}
