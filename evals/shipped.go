package evals

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// maxRecordEntries bounds the entries of the records' directory ListRecords reads: a directory
// planted with millions of names must not hold a CI run.
const maxRecordEntries = 4096

// ListRecords names the A/B records a workspace keeps, each NAME.json directly in RecordDir,
// sorted. A workspace with no such directory keeps none.
func ListRecords(root string) ([]string, error) {
	dir, err := untrusted.Confine(root, RecordDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(maxRecordEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %s: %w", RecordDir, err)
	}
	if len(entries) > maxRecordEntries {
		return nil, fmt.Errorf("%s holds more than %d entries; locum reads at most that many", RecordDir, maxRecordEntries)
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if ok && name != "" && !e.IsDir() {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// ErrNoRouting is a workspace that ships no routing file: no role routes by a record there.
var ErrNoRouting = errors.New(RoutingFile + " does not exist: no role routes by an A/B record here")

// VerifyRouting checks the routing a workspace ships, with no model: its shape and signature
// under trust, the record it names (there, unchanged since it was signed, a record of RecordDir),
// every role against what that record derives, and then every role it enables as a run would
// resolve it, against the roles the composition declares (their effort, the tasks they name). A record it
// names that is not there is a *MissingRecordError; no routing file is ErrNoRouting. Whether the
// record itself holds is VerifyRecord's to say.
func VerifyRouting(sv *schema.Validator, root string, trust []string, roles map[string]packs.Role) (*Verification, error) {
	if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(RoutingFile))); errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoRouting
	}
	v := &Verification{}
	r := v.readRouting(sv, root, trust)
	if r == nil {
		return v, nil
	}
	name, ok := strings.CutSuffix(strings.TrimPrefix(r.Record.Path, RecordDir+"/"), ".json")
	if !ok || name == "" || strings.Contains(name, "/") || !strings.HasPrefix(r.Record.Path, RecordDir+"/") {
		v.fail("%s names %s, which is not a record of %s", RoutingFile, r.Record.Path, RecordDir)
		return v, nil
	}
	data, err := untrusted.ReadFileIn(root, RecordPath(root, name), maxRecordBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s names %s: %w", RoutingFile, r.Record.Path, &MissingRecordError{Path: RecordPath(root, name)})
	}
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		v.fail("%s names %s, which is not an A/B record: %v", RoutingFile, r.Record.Path, err)
		return v, nil
	}
	v.Record = &rec
	v.Routing = DeriveRoles(&rec, roles)
	v.compareRouting(r, r.Record.Path, data)
	if v.Failed() {
		// A run would refuse every role of it for the same reason; saying so once per role adds nothing.
		return v, nil
	}
	for _, role := range sortedRoles(r.Roles) {
		if !r.Roles[role].Enabled {
			continue
		}
		declared, ok := roles[role]
		if !ok {
			continue // compareRouting names a role the composition does not declare
		}
		if _, err := ResolveRole(sv, root, trust, role, declared); err != nil {
			v.fail("role %s does not route as %s enables it: %v", role, RoutingFile, err)
		}
	}
	return v, nil
}

func sortedRoles(m map[string]RoutedRole) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
