package evals

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// Finding is one thing --verify found. A failure is exit 1; a note changes nothing.
type Finding struct {
	Fail bool
	Text string
}

// MissingRecordError is a record that is not there: nothing to verify (exit 2).
type MissingRecordError struct{ Path string }

func (e *MissingRecordError) Error() string {
	return fmt.Sprintf("no A/B record at %s; capture one with locum eval --ab ... or name it with --name", e.Path)
}

// Verification is what VerifyRecord found, and the record and routing it read.
type Verification struct {
	Record   *Record
	Findings []Finding
	Routing  map[string]RoutedRole
	// HostCost is the host arm's measured cost per task and role, as the record holds it.
	HostCost *HostArmReport
}

// Failed reports whether any finding fails the record.
func (v *Verification) Failed() bool {
	for _, f := range v.Findings {
		if f.Fail {
			return true
		}
	}
	return false
}

func (v *Verification) fail(format string, args ...any) {
	v.Findings = append(v.Findings, Finding{Fail: true, Text: fmt.Sprintf(format, args...)})
}

func (v *Verification) note(format string, args ...any) {
	v.Findings = append(v.Findings, Finding{Text: fmt.Sprintf(format, args...)})
}

// VerifyRecord checks a record without running any model: its shape, its signature and key, k
// and the matrix, every arm-L seed, every turn's model, every completed turn regraded by the
// predicates as they ship, the fingerprints, the host usage (on host turns only, each figure in
// its bounds, in a version 2 record), the cells and their usage sums re-folded, the register
// against a fresh render, and the routing file against a fresh derivation (checkRouting).
func VerifyRecord(sv *schema.Validator, root, name string, trust []string, roles map[string]packs.Role, checkRouting bool) (*Verification, error) {
	path := RecordPath(root, name)
	data, err := untrusted.ReadFileIn(root, path, maxRecordBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &MissingRecordError{Path: path}
	}
	if err != nil {
		return nil, err
	}
	v := &Verification{}
	rel := relTo(root, path)
	doc, err := sv.Validate(schema.ABRecord, rel, data)
	if err != nil {
		v.fail("the record's shape: %v", err)
		return v, nil
	}
	if err := Verify(doc.(map[string]any), trust); err != nil {
		v.fail("the record cannot be trusted: %v", err)
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		v.fail("the record: %v", err)
		return v, nil
	}
	v.Record = &rec
	tasks := Tasks()
	if want := len(tasks) * 2 * rec.K; len(rec.Turns) != want {
		v.fail("the matrix holds %d turns; %d tasks x 2 arms x k=%d is %d", len(rec.Turns), len(tasks), rec.K, want)
	}
	seen := map[string]bool{}
	for _, t := range rec.Turns {
		key := t.Key()
		if seen[key] {
			v.fail("turn %s appears twice", key)
		}
		seen[key] = true
		if t.Run < 1 || t.Run > rec.K {
			v.fail("turn %s has a run outside 1..k", key)
		}
	}
	for _, p := range usageProblems(rec.Version, rec.Turns) {
		v.fail("%s", p)
	}
	moved := map[string]bool{}
	for _, task := range tasks {
		fp, recorded := rec.Fingerprints[task.ID]
		if !recorded {
			moved[task.ID] = true
			v.fail("task %s is not in the record: it shipped after the capture, so the record measured none of it; routing of a role naming it is refused until a new capture", task.ID)
			continue
		}
		if fp != task.Fingerprint() {
			moved[task.ID] = true
			v.fail("task %s changed since capture: its fingerprint (prompt, fixture and predicate) differs from the record's, so the record measured a prompt that no longer exists; routing it earned is refused until a new capture", task.ID)
		}
	}
	for _, t := range rec.Turns {
		task, ok := TaskByID(t.Task)
		if !ok {
			v.fail("turn %s names an unknown task", t.Key())
			continue
		}
		if t.Arm == ArmLocal {
			if t.Seed == nil || *t.Seed != TurnSeed(rec.Seed, t.Task, t.Run) {
				v.fail("turn %s: its seed is not the one derived from the capture's seed %d", t.Key(), rec.Seed)
			}
			if want := rec.Local.Models[TaskRole(t.Task, roles)]; t.Model != want {
				v.fail("turn %s ran %q, not %q, the local model of its role", t.Key(), t.Model, want)
			}
		} else if t.Model != rec.Host.Model {
			v.fail("turn %s names host model %q, not the record's %q", t.Key(), t.Model, rec.Host.Model)
		}
		if !t.Completed {
			if t.Passed {
				v.fail("turn %s passed without completing", t.Key())
			}
			continue
		}
		if t.Error != "" && t.Arm == ArmLocal {
			if t.Passed {
				v.fail("turn %s passed with no answer", t.Key())
			}
			continue
		}
		if g := task.Grade(t.Output); g.Passed != t.Passed {
			why := "the record no longer matches its own output"
			if moved[t.Task] {
				why = "the predicates moved since capture"
			}
			v.fail("turn %s regrades as passed=%v, recorded passed=%v: %s", t.Key(), g.Passed, t.Passed, why)
		}
	}
	if folded := FoldCells(rec.Turns); !sameCells(folded, rec.Cells) {
		v.fail("the cells do not re-fold from the turns: recorded %s, re-folded %s", cellsText(rec.Cells), cellsText(folded))
	}
	register, err := untrusted.ReadFileIn(root, RegisterPath(root, name), maxRecordBytes)
	switch {
	case err != nil:
		v.fail("the register %s cannot be read: %v", relTo(root, RegisterPath(root, name)), err)
	case !bytes.Equal(register, RenderRegister(&rec, roles)):
		v.fail("the register %s differs from a fresh render of the record", relTo(root, RegisterPath(root, name)))
	}
	v.Routing = DeriveRoles(&rec, roles)
	v.HostCost = HostArmUsage(&rec, roles)
	if checkRouting {
		v.checkRouting(sv, root, rel, data, trust)
	}
	return v, nil
}

func (v *Verification) checkRouting(sv *schema.Validator, root, recordRel string, recordData []byte, trust []string) {
	r := v.readRouting(sv, root, trust)
	if r == nil {
		return
	}
	v.compareRouting(r, recordRel, recordData)
}

// readRouting reads the routing file, its shape and its signature; nil when it is missing (a
// note) or cannot be read as routing (a failure). A broken signature is a failure that still
// returns the routing, so its roles are compared too.
func (v *Verification) readRouting(sv *schema.Validator, root string, trust []string) *Routing {
	data, err := untrusted.ReadFileIn(root, RoutingFile, untrusted.ConfigCap)
	if errors.Is(err, fs.ErrNotExist) {
		v.note("%s does not exist; locum eval --write writes it", RoutingFile)
		return nil
	}
	if err != nil {
		v.fail("%s cannot be read: %v", RoutingFile, err)
		return nil
	}
	doc, err := sv.Validate(schema.Routing, RoutingFile, data)
	if err != nil {
		v.fail("%s: %v", RoutingFile, err)
		return nil
	}
	if err := Verify(doc.(map[string]any), trust); err != nil {
		v.fail("%s cannot be trusted: %v", RoutingFile, err)
	}
	var r Routing
	if err := json.Unmarshal(data, &r); err != nil {
		v.fail("%s: %v", RoutingFile, err)
		return nil
	}
	return &r
}

// compareRouting holds the routing to the record it names and to the roles the record derives
// (v.Routing).
func (v *Verification) compareRouting(r *Routing, recordRel string, recordData []byte) {
	if r.Record.Path != recordRel || r.Record.SHA256 != sha256Hex(recordData) {
		v.fail("%s names %s (sha256 %.12s), not this record", RoutingFile, r.Record.Path, r.Record.SHA256)
	}
	names := make([]string, 0, len(v.Routing))
	for n := range v.Routing {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		want, got := v.Routing[n], r.Roles[n]
		if got.Enabled != want.Enabled || got.Model != want.Model || got.Effort != want.Effort {
			v.fail("%s routes role %s as enabled=%v model=%s effort=%s; the record derives enabled=%v model=%s effort=%s",
				RoutingFile, n, got.Enabled, got.Model, got.Effort, want.Enabled, want.Model, want.Effort)
		}
	}
	for n := range r.Roles {
		if _, ok := v.Routing[n]; !ok {
			v.fail("%s routes role %s, which the record does not derive", RoutingFile, n)
		}
	}
}

func sameCells(a, b map[string]map[string]Cell) bool {
	return cellsText(a) == cellsText(b)
}

func cellsText(c map[string]map[string]Cell) string {
	data, _ := json.Marshal(c) // map keys are sorted
	return string(data)
}

func relTo(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(rel)
	}
	return path
}
