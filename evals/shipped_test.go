package evals

import (
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/schema"
)

func TestListRecords(t *testing.T) {
	cases := []struct {
		name  string
		files []string // relative to RecordDir; a trailing / is a directory
		want  []string
	}{
		{name: "no directory", want: nil},
		{name: "empty", files: []string{"./"}, want: nil},
		{name: "records sorted, registers and notes left out", files: []string{"b.json", "b.md", "a.json", "notes.md", "sub.json/", ".json"}, want: []string{"a", "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(root, filepath.FromSlash(RecordDir), f)
				if f[len(f)-1] == '/' {
					require.NoError(t, os.MkdirAll(p, 0o755))
					continue
				}
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte("{}"), 0o644))
			}
			got, err := ListRecords(root)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// shippedExample copies the example workspace's routing and record into a folder of the test's own.
func shippedExample(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.CopyFS(root, os.DirFS(exampleDir)))
	return root
}

func builtinRoles(t *testing.T) map[string]packs.Role {
	t.Helper()
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	return (&packs.Composition{Packs: []*packs.Pack{p}}).Roles()
}

// resign rewrites the example's routing with edit applied, signed again by the key the example
// workspace trusts: an edit only the routing's checks, not its signature, can catch.
func resign(t *testing.T, root string, edit func(r *Routing)) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(RoutingFile)))
	require.NoError(t, err)
	var r Routing
	require.NoError(t, fromDoc(mustDecode(t, data), &r))
	edit(&r)
	require.NoError(t, SignRouting(root, r, func(doc map[string]any) error { return Sign(doc, exampleKey()) }))
}

func mustDecode(t *testing.T, data []byte) any {
	t.Helper()
	doc, err := schema.Decode(RoutingFile, data)
	require.NoError(t, err)
	return doc
}

func TestVerifyRouting(t *testing.T) {
	trust := []string{FormatPublicKey(exampleKey().Public().(ed25519.PublicKey))}
	cases := []struct {
		name  string
		edit  func(t *testing.T, root string)
		roles func(map[string]packs.Role)
		fails []string
		err   func(error) bool
	}{
		{name: "the example holds"},
		{
			name: "a role the pack runs at another effort than it was measured at",
			roles: func(r map[string]packs.Role) {
				code := r["code"]
				code.Effort = "medium"
				r["code"] = code
			},
			fails: []string{`role code does not route as .locum/routing.json enables it: role "code" has no earned routing: it was measured at effort low, but the pack runs it at medium; ` +
				`the person accepts a model for it with: locum roles accept code MODEL (it screens the model on the role's tasks first), or earns it with a signed A/B record (locum eval)`},
		},
		{
			name: "a routing naming a file that is not a record",
			edit: func(t *testing.T, root string) {
				resign(t, root, func(r *Routing) { r.Record.Path = ".locum/workspace.json" })
			},
			fails: []string{".locum/routing.json names .locum/workspace.json, which is not a record of .locum/evals/ab"},
		},
		{
			name: "a routing re-signed with a role the record does not earn",
			edit: func(t *testing.T, root string) {
				resign(t, root, func(r *Routing) {
					code := r.Roles["code"]
					code.Model = "another-model"
					r.Roles["code"] = code
				})
			},
			fails: []string{".locum/routing.json routes role code as enabled=true model=another-model effort=low; the record derives enabled=true model=scripted-not-a-model effort=low"},
		},
		{
			name: "the record it names is missing",
			edit: func(t *testing.T, root string) {
				require.NoError(t, os.Remove(RecordPath(root, DefaultRecord)))
			},
			err: func(err error) bool {
				var missing *MissingRecordError
				return errors.As(err, &missing)
			},
		},
		{
			name: "no routing",
			edit: func(t *testing.T, root string) {
				require.NoError(t, os.Remove(filepath.Join(root, filepath.FromSlash(RoutingFile))))
			},
			err: func(err error) bool { return errors.Is(err, ErrNoRouting) },
		},
	}
	sv, err := schema.New()
	require.NoError(t, err)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := shippedExample(t)
			if tc.edit != nil {
				tc.edit(t, root)
			}
			roles := builtinRoles(t)
			if tc.roles != nil {
				tc.roles(roles)
			}
			v, err := VerifyRouting(sv, root, trust, roles)
			if tc.err != nil {
				assert.True(t, tc.err(err), "%v", err)
				return
			}
			require.NoError(t, err)
			var fails []string
			for _, f := range v.Findings {
				if f.Fail {
					fails = append(fails, f.Text)
				}
			}
			assert.Equal(t, tc.fails, fails)
		})
	}
}
