package evals

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/ledger"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// HostCost is what doing a kind of task directly cost the host, measured by an A/B record: the
// means, per host turn that printed its usage (completed or not: a failed attempt was paid for
// too), over the turns of the tasks it names. It is what the ledger sets against a delegated run
// of the role the tasks earn.
type HostCost struct {
	Tasks []string `json:"tasks"`
	// Role is the role whose routing the tasks earn ("" when no role names them); a run of the
	// mode that runs with that role is the delegated side of the comparison.
	Role   string `json:"role"`
	Method string `json:"method"`
	// Measured counts the A/B samples (turns of arm H) the means are over, of Samples the record
	// holds for the tasks.
	Measured                 int     `json:"measured"`
	Samples                  int     `json:"samples"`
	NumTurns                 float64 `json:"num_turns"`
	InputTokens              float64 `json:"input_tokens"`
	CacheCreationInputTokens float64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     float64 `json:"cache_read_input_tokens"`
	OutputTokens             float64 `json:"output_tokens"`
	USD                      float64 `json:"total_cost_usd"`
}

// Tokens is every token the mean sample's requests read or wrote.
func (c HostCost) Tokens() float64 {
	return c.InputTokens + c.CacheCreationInputTokens + c.CacheReadInputTokens + c.OutputTokens
}

// String is the figure as one line: "3.0 turns, 48210 tokens, $0.0421 (measured, the mean of 5
// A/B samples)", its turns the host's own (num_turns), each sample one turn of arm H.
func (c HostCost) String() string {
	return fmt.Sprintf("%.1f turns, %.0f tokens, $%.4f (%s, the mean of %d A/B samples)", c.NumTurns, c.Tokens(), c.USD, c.Method, c.Measured)
}

// HostArmReport is the host arm's measured cost in one record, per task and per role.
type HostArmReport struct {
	// Record is the record's path relative to the workspace root, SHA256 its bytes' digest.
	Record string `json:"record"`
	SHA256 string `json:"sha256"`
	// Tasks are the tasks with at least one measured host turn, in task order.
	Tasks []HostCost `json:"tasks"`
	// Roles pools each role's measured tasks.
	Roles map[string]HostCost `json:"roles"`
	// Stale are the tasks left out because their prompt, fixture or predicate changed since the
	// record measured them: it measured a prompt that no longer ships.
	Stale []string `json:"stale,omitempty"`
}

// Role is the measured direct cost of a role's tasks, if the record measured any.
func (r *HostArmReport) Role(role string) (HostCost, bool) {
	c, ok := r.Roles[role]
	return c, ok
}

// HostArmUsage is what the host arm of rec measured: per task, and pooled per role, the mean
// cost of a host turn that printed its usage. Tasks whose fingerprint is not the shipped one are
// left out and named. It trusts rec as given; LoadHostArmUsage checks a record first.
func HostArmUsage(rec *Record, roles map[string]packs.Role) *HostArmReport {
	r := &HostArmReport{Roles: map[string]HostCost{}}
	cells := FoldCells(rec.Turns)
	type pool struct {
		tasks   []string
		sum     CellUsage
		samples int
	}
	pools := map[string]*pool{}
	for _, task := range Tasks() {
		if rec.Fingerprints[task.ID] != task.Fingerprint() {
			if _, recorded := rec.Fingerprints[task.ID]; recorded {
				r.Stale = append(r.Stale, task.ID)
			}
			continue
		}
		u := cells[task.ID][ArmHost].Usage
		if u == nil || u.Measured == 0 {
			continue
		}
		role := TaskRole(task.ID, roles)
		r.Tasks = append(r.Tasks, meanCost([]string{task.ID}, role, *u, rec.K))
		if role == "" {
			continue
		}
		p := pools[role]
		if p == nil {
			p = &pool{}
			pools[role] = p
		}
		p.tasks = append(p.tasks, task.ID)
		p.samples += rec.K
		p.sum.Measured += u.Measured
		p.sum.NumTurns += u.NumTurns
		p.sum.InputTokens += u.InputTokens
		p.sum.CacheCreationInputTokens += u.CacheCreationInputTokens
		p.sum.CacheReadInputTokens += u.CacheReadInputTokens
		p.sum.OutputTokens += u.OutputTokens
		p.sum.TotalCostUSD += u.TotalCostUSD
	}
	for role, p := range pools {
		c := meanCost(p.tasks, role, p.sum, 0)
		c.Samples = p.samples
		r.Roles[role] = c
	}
	return r
}

func meanCost(tasks []string, role string, u CellUsage, k int) HostCost {
	n := float64(u.Measured)
	return HostCost{Tasks: tasks, Role: role, Method: MethodMeasured, Measured: u.Measured, Samples: k,
		NumTurns: float64(u.NumTurns) / n, InputTokens: float64(u.InputTokens) / n,
		CacheCreationInputTokens: float64(u.CacheCreationInputTokens) / n, CacheReadInputTokens: float64(u.CacheReadInputTokens) / n,
		OutputTokens: float64(u.OutputTokens) / n, USD: u.TotalCostUSD / n}
}

// HostUsageError is a record whose host usage cannot be counted: what is wrong with it.
type HostUsageError struct {
	Path     string
	Problems []string
}

func (e *HostUsageError) Error() string {
	return fmt.Sprintf("the A/B record %s: its host usage cannot be counted: %s", e.Path, strings.Join(e.Problems, "; "))
}

// LoadHostArmUsage reads the record name of the workspace at root for its host arm's measured
// cost. The record is a repository's file: it counts only when its signature holds under trust
// (the operator's keys; a key the repository lists for itself is not enough), it fits the
// schema, its host usage is well-formed and its cells re-fold from its turns. The bytes are
// decoded once, and that decoding is the one checked and used. A record that is not there is a
// *MissingRecordError; an untrusted one wraps ErrUnsigned, ErrBadSignature or *UntrustedKeyError.
func LoadHostArmUsage(v *schema.Validator, root, name string, trust TrustedKeys, roles map[string]packs.Role) (*HostArmReport, error) {
	path := RecordPath(root, name)
	rel := relTo(root, path)
	data, err := untrusted.ReadFileIn(root, path, maxRecordBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &MissingRecordError{Path: path}
	}
	if err != nil {
		return nil, err
	}
	doc, err := schema.Decode(rel, data)
	if err != nil {
		return nil, err
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the A/B record %s is not a JSON object", rel)
	}
	if err := VerifyTrusting(obj, trust); err != nil {
		return nil, fmt.Errorf("the A/B record %s cannot be trusted: %w", rel, err)
	}
	if err := v.ValidateValue(schema.ABRecord, rel, doc); err != nil {
		return nil, err
	}
	var rec Record
	if err := fromDoc(doc, &rec); err != nil {
		return nil, fmt.Errorf("the A/B record %s: %w", rel, err)
	}
	problems := usageProblems(rec.Version, rec.Turns)
	if folded := FoldCells(rec.Turns); !sameCells(folded, rec.Cells) {
		problems = append(problems, "the cells do not re-fold from the turns")
	}
	if len(problems) > 0 {
		return nil, &HostUsageError{Path: rel, Problems: problems}
	}
	r := HostArmUsage(&rec, roles)
	r.Record, r.SHA256 = rel, sha256Hex(data)
	return r, nil
}

// DefaultRecord is the A/B record a workspace's capture writes unless it is named otherwise.
const DefaultRecord = "local-worker"

// HostArmFor is the host arm's measured direct cost from the workspace's default A/B record,
// trusted only under the operator's keys, for the ledger to show beside its estimates: nil, and
// no error, where the workspace has no record.
func HostArmFor(v *schema.Validator, c *packs.Composition) (*HostArmReport, error) {
	rep, err := LoadHostArmUsage(v, c.Root, DefaultRecord, TrustedKeys{Keys: c.OperatorKeys(), Where: "your user config (trust_keys)"}, c.Roles())
	var missing *MissingRecordError
	if errors.As(err, &missing) {
		return nil, nil
	}
	return rep, err
}

// Ledger is the report as the ledger shows it beside its estimates.
func (r *HostArmReport) Ledger() *ledger.DirectMeasured {
	if r == nil || len(r.Roles) == 0 {
		return nil
	}
	out := &ledger.DirectMeasured{Record: r.Record, Roles: map[string]ledger.DirectCost{}}
	for role, c := range r.Roles {
		out.Roles[role] = ledger.DirectCost{Method: c.Method, Samples: c.Measured, Turns: c.NumTurns, Tokens: c.Tokens(), USD: c.USD}
	}
	return out
}
