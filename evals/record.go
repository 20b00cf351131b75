package evals

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/untrusted"
)

// The arms of an A/B capture.
const (
	ArmLocal = "L"
	ArmHost  = "H"
)

// RecordDir is where a workspace keeps its A/B records, relative to the root.
const RecordDir = ".locum/evals/ab"

// Record is one A/B capture, as spec/ab-record.schema.json describes it.
type Record struct {
	Version      int                        `json:"version"`
	Name         string                     `json:"name"`
	Created      string                     `json:"created"`
	K            int                        `json:"k"`
	Seed         int64                      `json:"seed"`
	Local        LocalArm                   `json:"local"`
	Host         HostArm                    `json:"host"`
	Commit       string                     `json:"commit"`
	Tree         string                     `json:"tree"`
	Machine      Machine                    `json:"machine"`
	Locum        LocumBuild                 `json:"locum"`
	Fingerprints map[string]string          `json:"fingerprints"`
	Turns        []Turn                     `json:"turns"`
	Cells        map[string]map[string]Cell `json:"cells"`
	Signer       string                     `json:"signer,omitempty"`
	Signature    string                     `json:"signature,omitempty"`
}

// LocalArm is the candidate: the model of each role, at one effort, on one endpoint.
type LocalArm struct {
	Models   map[string]string `json:"models"`
	Effort   string            `json:"effort"`
	Endpoint string            `json:"endpoint"`
	// Digests are the server's identity of each model's weights where it gives one: Ollama's
	// content digest, llama-server's file, type, parameters and size, vLLM's model root.
	Digests map[string]string `json:"digests,omitempty"`
}

// HostArm is the host agent as declared: its command, the version it reported, its model as the
// operator named it (locum cannot observe it).
type HostArm struct {
	Command string `json:"command"`
	Version string `json:"version"`
	Model   string `json:"model"`
}

// Machine is where the capture ran; never the hostname.
type Machine struct {
	CPU         string `json:"cpu"`
	MemoryBytes int64  `json:"memory_bytes"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	Go          string `json:"go"`
}

// LocumBuild is the locum that captured.
type LocumBuild struct {
	Version      string `json:"version"`
	BinarySHA256 string `json:"binary_sha256"`
}

// Turn is one sample of one task by one arm.
type Turn struct {
	Arm       string   `json:"arm"`
	Task      string   `json:"task"`
	Run       int      `json:"run"`
	Seed      *int64   `json:"seed"`
	Model     string   `json:"model"`
	Completed bool     `json:"completed"`
	Exit      *int     `json:"exit"`
	WallMs    int64    `json:"wall_ms"`
	Passed    bool     `json:"passed"`
	Evidence  []string `json:"evidence"`
	Output    string   `json:"output"`
	Error     string   `json:"error,omitempty"`
	// Reply is a local turn's reply class (answer, empty, think_only, truncated,
	// lost_to_thinking, malformed); the host's replies have none.
	Reply string `json:"reply,omitempty"`
	// HostUsage is what a host turn cost the host, as the host command printed it (ReadHostResult);
	// nil where it printed none. UsageNote says why output that looked like a result object gave
	// none. Both are version 2 of the record.
	HostUsage *HostUsage `json:"host_usage,omitempty"`
	UsageNote string     `json:"usage_note,omitempty"`
}

// Key names a turn's place in the matrix.
func (t Turn) Key() string { return fmt.Sprintf("%s/%s/%d", t.Arm, t.Task, t.Run) }

// Cell is one task and arm: how many of its k turns completed and passed, and for the host arm
// what the turns that printed their usage cost in all (nil where none did).
type Cell struct {
	Completed int        `json:"completed"`
	Passed    int        `json:"passed"`
	Usage     *CellUsage `json:"usage,omitempty"`
}

// TurnSeed derives the sampling seed of one local turn from the capture's seed, so --verify can
// check every one.
func TurnSeed(seed int64, task string, run int) int64 {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d/%s/%d", seed, task, run)))
	return int64(binary.BigEndian.Uint64(sum[:8]) >> 1)
}

// FoldCells counts the turns into cells.
func FoldCells(turns []Turn) map[string]map[string]Cell {
	cells := map[string]map[string]Cell{}
	for _, t := range Tasks() {
		cells[t.ID] = map[string]Cell{ArmLocal: {}, ArmHost: {}}
	}
	for _, t := range turns {
		if cells[t.Task] == nil {
			cells[t.Task] = map[string]Cell{}
		}
		c := cells[t.Task][t.Arm]
		if t.Completed {
			c.Completed++
		}
		if t.Passed {
			c.Passed++
		}
		if t.HostUsage != nil {
			// A fresh sum, never the caller's: cells share no pointer with each other.
			sum := CellUsage{}
			if c.Usage != nil {
				sum = *c.Usage
			}
			sum.add(*t.HostUsage)
			c.Usage = &sum
		}
		cells[t.Task][t.Arm] = c
	}
	return cells
}

// EarnK is the fewest turns per task and arm that earn routing. k = 5 per cell supports a
// recorded rate and nothing else; a capture may take fewer to explore, and then earns nothing.
const EarnK = 5

// ThinRecordError is a record, or a capture asked to write routing, with k below EarnK.
type ThinRecordError struct{ K int }

func (e *ThinRecordError) Error() string {
	return fmt.Sprintf("k=%d: a record earns routing at k=%d", e.K, EarnK)
}

// StaleTaskError names the tasks whose prompt, fixture or predicate changed since the record
// measured them: the record measured prompts that no longer exist.
type StaleTaskError struct{ Tasks []string }

func (e *StaleTaskError) Error() string {
	return fmt.Sprintf("task %s changed since capture (its fingerprint of prompt, fixture and predicate differs from the record's); a new capture is needed",
		strings.Join(e.Tasks, ", "))
}

// StaleTasks lists, in task order, the tasks among ids whose fingerprint differs from the one
// recorded (an unknown task is stale too: nothing can regrade it).
func StaleTasks(recorded map[string]string, ids []string) []string {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var stale, unknown []string
	for _, t := range Tasks() {
		if want[t.ID] && recorded[t.ID] != t.Fingerprint() {
			stale = append(stale, t.ID)
		}
		delete(want, t.ID)
	}
	for id := range want {
		unknown = append(unknown, id)
	}
	sort.Strings(unknown)
	return append(stale, unknown...)
}

// CheckEarns is what routing rests on in the record itself, read again wherever routing is
// used: k at least EarnK, and every task of the role measured under the prompt that ships.
func CheckEarns(recordData []byte, tasks []string) error {
	var r struct {
		K            int               `json:"k"`
		Fingerprints map[string]string `json:"fingerprints"`
	}
	if err := untrusted.Unmarshal(recordData, &r); err != nil {
		return fmt.Errorf("the A/B record: %w", err)
	}
	if r.K < EarnK {
		return &ThinRecordError{K: r.K}
	}
	if stale := StaleTasks(r.Fingerprints, tasks); len(stale) > 0 {
		return &StaleTaskError{Tasks: stale}
	}
	return nil
}

// Qualifies is the routing rule for one task, fixed before any outcome: k is at least EarnK,
// every one of the k local turns passes, every one of the k host turns completes, and local
// passes are at least host passes. A positive tie qualifies; a 0/k tie cannot, since local must
// pass all k.
func Qualifies(local, host Cell, k int) (bool, string) {
	switch {
	case k <= 0:
		return false, "no turns"
	case k < EarnK:
		return false, (&ThinRecordError{K: k}).Error()
	case local.Passed < k:
		return false, fmt.Sprintf("L%d/H%d: local passed %d of %d", local.Passed, host.Passed, local.Passed, k)
	case host.Completed < k:
		return false, fmt.Sprintf("L%d/H%d: host completed %d of %d", local.Passed, host.Passed, host.Completed, k)
	case local.Passed < host.Passed:
		return false, fmt.Sprintf("L%d/H%d: local below host", local.Passed, host.Passed)
	}
	return true, fmt.Sprintf("L%d/H%d", local.Passed, host.Passed)
}

// RoleTasks are the shipped eval tasks the role declares, in the shipped order: what a screen
// of the role runs.
func RoleTasks(role string, declared packs.Role) []Task {
	var out []Task
	for _, t := range Tasks() {
		if TaskRole(t.ID, map[string]packs.Role{role: declared}) == role {
			out = append(out, t)
		}
	}
	return out
}

// TaskRole is the role whose routing a task earns.
func TaskRole(task string, roles map[string]packs.Role) string {
	names := make([]string, 0, len(roles))
	for n := range roles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, t := range roles[n].Tasks {
			if t == task {
				return n
			}
		}
	}
	return ""
}

// DeriveRoles applies the routing rule to a record: a role is enabled when every task it names
// qualifies, and then runs the local model it was measured with at the capture's effort.
func DeriveRoles(rec *Record, roles map[string]packs.Role) map[string]RoutedRole {
	out := map[string]RoutedRole{}
	for name, role := range roles {
		rr := RoutedRole{Enabled: len(role.Tasks) > 0, Model: rec.Local.Models[name], Effort: rec.Local.Effort, Tasks: append([]string(nil), role.Tasks...)}
		var reasons []string
		if rec.K < EarnK {
			rr.Enabled = false
			reasons = append(reasons, (&ThinRecordError{K: rec.K}).Error())
		}
		for _, task := range role.Tasks {
			cell := rec.Cells[task]
			ok, why := Qualifies(cell[ArmLocal], cell[ArmHost], rec.K)
			if !ok && rec.K >= EarnK {
				rr.Enabled = false
				reasons = append(reasons, task+" "+why)
			}
		}
		if stale := StaleTasks(rec.Fingerprints, role.Tasks); len(stale) > 0 {
			rr.Enabled = false
			reasons = append(reasons, (&StaleTaskError{Tasks: stale}).Error())
		}
		if rr.Model == "" {
			rr.Enabled = false
			reasons = append(reasons, "no local model was measured for it")
		}
		if !rr.Enabled {
			rr.Reason = strings.Join(reasons, "; ")
		}
		if rr.Model == "" {
			rr.Model = "none"
		}
		out[name] = rr
	}
	return out
}

// RecordPath is where the record of a name lives.
func RecordPath(root, name string) string {
	return filepath.Join(root, filepath.FromSlash(RecordDir), name+".json")
}

// RegisterPath is where the register rendered from a record lives.
func RegisterPath(root, name string) string {
	return filepath.Join(root, filepath.FromSlash(RecordDir), name+".md")
}

// MarshalSigned signs the record and renders it as indented JSON.
func MarshalSigned(rec *Record, key ed25519.PrivateKey) ([]byte, error) {
	rec.Signer, rec.Signature = "", ""
	doc, err := toDoc(rec)
	if err != nil {
		return nil, err
	}
	if err := Sign(doc, key); err != nil {
		return nil, err
	}
	out, err := marshalIndent(doc)
	if err != nil {
		return nil, err
	}
	rec.Signer, rec.Signature = doc["signer"].(string), doc["signature"].(string)
	return out, nil
}

func toDoc(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}

func marshalIndent(doc map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteExclusive creates file with data, refusing to replace anything already there. O_EXCL
// refuses a planted link at the name itself; the caller confines the folder.
func WriteExclusive(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(file)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// The outcomes of a turn, as the register counts them; a cell's four sum to k.
const (
	OutcomeCompliant      = "compliant"
	OutcomeNonCompliant   = "non-compliant"
	OutcomeDidNotComplete = "did not complete"
	OutcomeUnattributed   = "could not attribute"
)

// Outcome sorts a turn: it did not complete (a host that failed or ran out of time); it
// completed with nothing the predicate could grade, so no verdict can be attributed to the
// model (a local reply with no answer: empty, thinking only, truncated, lost to thinking,
// malformed; a host that printed nothing); or the predicate judged its answer compliant or not.
func (t Turn) Outcome() string {
	switch {
	case !t.Completed:
		return OutcomeDidNotComplete
	case t.Passed:
		return OutcomeCompliant
	case t.Arm == ArmLocal && t.Error != "", t.Arm == ArmHost && strings.TrimSpace(t.Output) == "":
		return OutcomeUnattributed
	}
	return OutcomeNonCompliant
}

// Outcomes counts a record's turns by task, arm and outcome.
func Outcomes(turns []Turn) map[string]map[string]map[string]int {
	out := map[string]map[string]map[string]int{}
	for _, t := range turns {
		if out[t.Task] == nil {
			out[t.Task] = map[string]map[string]int{}
		}
		if out[t.Task][t.Arm] == nil {
			out[t.Task][t.Arm] = map[string]int{}
		}
		out[t.Task][t.Arm][t.Outcome()]++
	}
	return out
}

// isHexDigest reports whether s reads as a content digest (Ollama's is hex), rather than a
// server's description of the weights.
func isHexDigest(s string) bool {
	if len(s) < 12 {
		return false
	}
	for _, r := range strings.TrimPrefix(s, "sha256:") {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// RenderRegister is the human page of a record, deterministic to the byte.
func RenderRegister(rec *Record, roles map[string]packs.Role) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# A/B record: %s\n\n", rec.Name)
	fmt.Fprintf(&b, "Rendered by locum from `%s.json`; do not edit: `locum eval --verify` compares this page with a fresh render, byte for byte.\n\n", rec.Name)
	fmt.Fprintf(&b, "- Date: %s. Captured by locum %s (binary sha256 `%s`) at commit `%s` (tree %s).\n", rec.Created, rec.Locum.Version, rec.Locum.BinarySHA256, rec.Commit, rec.Tree)
	fmt.Fprintf(&b, "- Seed %d; k = %d turns per task and arm.\n", rec.Seed, rec.K)
	fmt.Fprintf(&b, "- Local arm (L), at effort %s, on %s:\n", rec.Local.Effort, rec.Local.Endpoint)
	for _, role := range sortedNames(rec.Local.Models) {
		model := rec.Local.Models[role]
		digest := "digest not reported by the server"
		switch d := rec.Local.Digests[model]; {
		case isHexDigest(d):
			digest = "digest `" + d + "`"
		case d != "":
			digest = "weights `" + d + "` as the server describes them"
		}
		fmt.Fprintf(&b, "  - role %s: %s, %s.\n", role, model, digest)
	}
	fmt.Fprintf(&b, "- Host arm (H): `%s`, version %q, model %s as declared (locum cannot observe it).\n", rec.Host.Command, rec.Host.Version, rec.Host.Model)
	fmt.Fprintf(&b, "- Machine: %s, %d MiB, %s/%s, %s.\n\n", rec.Machine.CPU, rec.Machine.MemoryBytes>>20, rec.Machine.OS, rec.Machine.Arch, rec.Machine.Go)
	outcomes := Outcomes(rec.Turns)
	b.WriteString("| task | arm | compliant | non-compliant | did not complete | could not attribute | k |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, t := range Tasks() {
		for _, arm := range []string{ArmLocal, ArmHost} {
			o := outcomes[t.ID][arm]
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d |\n", t.ID, arm, o[OutcomeCompliant], o[OutcomeNonCompliant], o[OutcomeDidNotComplete], o[OutcomeUnattributed], rec.K)
		}
	}
	b.WriteString("\n| task | L passed | H passed | H completed | qualifies |\n| --- | --- | --- | --- | --- |\n")
	for _, t := range Tasks() {
		cell := rec.Cells[t.ID]
		ok, why := Qualifies(cell[ArmLocal], cell[ArmHost], rec.K)
		verdict := "yes"
		if !ok {
			verdict = "no (" + why + ")"
		}
		fmt.Fprintf(&b, "| %s | %d/%d | %d/%d | %d/%d | %s |\n", t.ID, cell[ArmLocal].Passed, rec.K, cell[ArmHost].Passed, rec.K, cell[ArmHost].Completed, rec.K, verdict)
	}
	b.WriteString("\n| role | tasks | routing |\n| --- | --- | --- |\n")
	derived := DeriveRoles(rec, roles)
	for _, n := range sortedNames(derived) {
		r := derived[n]
		state := fmt.Sprintf("enabled: %s at effort %s", r.Model, r.Effort)
		if !r.Enabled {
			state = "disabled: " + r.Reason
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", n, strings.Join(r.Tasks, ", "), state)
	}
	renderHostUsage(&b, rec)
	b.WriteString("\nCompliant: the predicate passed the answer. Non-compliant: it failed it. Did not complete: the turn ended without an answer " +
		"(the host failed or ran out of time). Could not attribute: the turn completed with nothing to grade (a local reply that was empty, " +
		"thinking only, truncated or lost to thinking; a host that printed nothing), so no verdict rests on the model.\n\n")
	fmt.Fprintf(&b, "The rule, fixed before any outcome: a record earns routing at k >= %d; a task qualifies when all k local turns pass and all k host turns complete, "+
		"with local passes at least host passes (a positive tie qualifies, a 0/k tie does not); a role is enabled when every task it names qualifies "+
		"and was measured under the prompt that ships.\n\n", EarnK)
	fmt.Fprintf(&b, "k = %d per cell supports a recorded rate and nothing else: not general reliability, not the quality of other tasks, not the host model's identity.\n", rec.K)
	return []byte(b.String())
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func joinModels(models map[string]string) string {
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + models[n]
	}
	return strings.Join(parts, ", ")
}

// ThisMachine describes the machine: CPU model, memory, OS, architecture and Go version.
func ThisMachine() Machine {
	m := Machine{CPU: "unknown", OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				m.MemoryBytes = kb * 1024
			}
		}
	}
	return m
}
