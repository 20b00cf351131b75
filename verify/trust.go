package verify

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/evals"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/transform"
	"github.com/locumdev/locum/schema"
)

// checkKey is a rollback key of the check's own: the checks never touch the operator's state.
func checkKey() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return key
}

// trustChecks show that a file committed to a repository cannot defeat a rail.
func trustChecks() []Check {
	return []Check{
		{Name: "trust/planted-rollback-record-never-acted-on", Run: checkPlantedRecord},
		{Name: "trust/workspace-cannot-leave-loopback", Run: checkWorkspaceAllowRemote},
		{Name: "trust/duplicate-key-cannot-forge-routing", Run: checkDuplicateRouting},
	}
}

// checkPlantedRecord plants, in a folder without .git, a record naming a file outside the
// repository and a record forged with another key for a file inside it: neither is restored nor
// deleted.
func checkPlantedRecord(context.Context, *Env) error {
	dir, err := os.MkdirTemp("", "locum-offline-")
	if err != nil {
		return couldNot(err)
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "repo")
	outside := filepath.Join(dir, "victim")
	inside := filepath.Join(root, "calc.go")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return couldNot(err)
	}
	for _, f := range []string{outside, inside} {
		if err := os.WriteFile(f, []byte("the user's own bytes\n"), 0o644); err != nil {
			return couldNot(err)
		}
	}
	// A genuine record, written by a guard keyed with the attacker's key, stands in for one
	// copied from another machine; the other is a hand-made record for a file outside.
	attacker := rails.Rollback{Dir: transform.RollbackDir(root), Root: root, Key: checkKey()}
	g, err := rails.GuardFile(inside, attacker)
	if err != nil {
		return couldNot(err)
	}
	if err := g.Write([]byte("planted\n")); err != nil {
		return couldNot(err)
	}
	g.Keep()
	if err := os.WriteFile(inside, []byte("planted\n"), 0o644); err != nil {
		return couldNot(err)
	}
	planted := filepath.Join(attacker.Dir, "0000000000000000.json")
	rec, _ := json.Marshal(map[string]any{"version": 1, "path": outside, "mode": 0o4755, "size": 8, "original_sha256": "x", "written_sha256": "y", "mac": "00"})
	if err := os.WriteFile(planted, rec, 0o644); err != nil {
		return couldNot(err)
	}
	if err := os.WriteFile(strings.TrimSuffix(planted, ".json")+".orig", []byte("planted\n"), 0o644); err != nil {
		return couldNot(err)
	}
	mine := rails.Rollback{Dir: attacker.Dir, Root: root, Key: checkKey()}
	done, err := rails.Recover(mine)
	if err != nil {
		return fmt.Errorf("recovery failed instead of ignoring the planted records: %w", err)
	}
	for _, r := range done {
		if r.Action != "untrusted" {
			return fmt.Errorf("a planted record of %s was acted on (%s)", r.Record.Path, r.Action)
		}
	}
	if len(done) != 2 {
		return fmt.Errorf("%d planted records reported, want 2", len(done))
	}
	if data, _ := os.ReadFile(outside); !bytes.Equal(data, []byte("the user's own bytes\n")) {
		return errors.New("a file outside the repository was overwritten")
	}
	if st, _ := os.Stat(outside); st.Mode()&os.ModeSetuid != 0 {
		return errors.New("a file outside the repository was made setuid")
	}
	if _, err := os.Stat(planted); err != nil {
		return errors.New("a planted record was deleted; locum never deletes a record it cannot trust")
	}
	return nil
}

func checkWorkspaceAllowRemote(context.Context, *Env) error {
	root, cleanup, err := scratchRepo()
	if err != nil {
		return couldNot(err)
	}
	defer cleanup()
	ws := `{"packs":["tools/local-llm"],"endpoint":{"allow_remote":true,"base_url":"http://10.0.0.1:1234/v1"}}`
	if err := os.MkdirAll(filepath.Join(root, ".locum"), 0o755); err != nil {
		return couldNot(err)
	}
	if err := os.WriteFile(filepath.Join(root, packs.WorkspaceFile), []byte(ws), 0o644); err != nil {
		return couldNot(err)
	}
	v, err := schema.New()
	if err != nil {
		return couldNot(err)
	}
	_, err = packs.Compose(v, root)
	var inv *schema.InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "/endpoint/allow_remote: allow_remote is the operator's") {
		return fmt.Errorf("a workspace setting allow_remote was not refused by its pointer: %v", err)
	}
	return nil
}

// checkDuplicateRouting signs a routing file, then prepends a second "roles" object naming
// another model: the role must be refused, never routed to that model.
func checkDuplicateRouting(context.Context, *Env) error {
	root, cleanup, err := scratchRepo()
	if err != nil {
		return couldNot(err)
	}
	defer cleanup()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return couldNot(err)
	}
	recordRel := ".locum/evals/ab/local-worker.json"
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(recordRel)), 0o755); err != nil {
		return couldNot(err)
	}
	if err := os.WriteFile(filepath.Join(root, recordRel), []byte("{}\n"), 0o644); err != nil {
		return couldNot(err)
	}
	sum, err := evals.FileSHA256(filepath.Join(root, recordRel))
	if err != nil {
		return couldNot(err)
	}
	var r evals.Routing
	r.Version = 1
	r.Record.Path, r.Record.SHA256 = recordRel, sum
	r.Roles = map[string]evals.RoutedRole{"review": {Enabled: true, Model: "measured-model", Effort: "low", Tasks: []string{"codify"}}}
	if err := evals.SignRouting(root, r, func(doc map[string]any) error { return evals.Sign(doc, key) }); err != nil {
		return couldNot(err)
	}
	file := filepath.Join(root, evals.RoutingFile)
	data, err := os.ReadFile(file)
	if err != nil {
		return couldNot(err)
	}
	forged := append([]byte(`{"roles":{"review":{"enabled":true,"model":"evil-model","effort":"low","tasks":["codify"]}},`), bytes.TrimPrefix(bytes.TrimSpace(data), []byte("{"))...)
	if err := os.WriteFile(file, forged, 0o644); err != nil {
		return couldNot(err)
	}
	v, err := schema.New()
	if err != nil {
		return couldNot(err)
	}
	route, err := evals.ResolveRole(v, root, []string{evals.FormatPublicKey(pub)}, "review", packs.Role{Effort: "low"})
	if err == nil {
		return fmt.Errorf("a routing file with a duplicate key routed the role to %s", route.Model)
	}
	if !strings.Contains(err.Error(), "duplicate key") {
		return fmt.Errorf("the refusal does not name the duplicate key: %v", err)
	}
	return nil
}
