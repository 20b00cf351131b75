package evals

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// CaptureOptions is one A/B capture.
type CaptureOptions struct {
	Name        string
	K           int
	Seed        int64
	Host        HostCommand
	HostModel   string
	Models      map[string]string // role to local model
	TurnTimeout time.Duration
	Root        string
	Roles       map[string]packs.Role
	Key         ed25519.PrivateKey
	Version     string
	BinarySHA   string
	// Local is the run arm L's turns go through, the engine every mode runs on: its settings give
	// the endpoint, the input budget, the thinking cap (effort) and max_output_tokens, so the
	// record measures the rails its routing will later run under; the run journal gets every
	// request and reply.
	Local engine.RunSpec
	// Log receives one progress line per turn.
	Log io.Writer
}

// Conditions are what a journal was taken under. A journal is resumed only under the same.
type Conditions struct {
	Commit       string            `json:"commit"`
	Tree         string            `json:"tree"`
	Machine      Machine           `json:"machine"`
	Seed         int64             `json:"seed"`
	K            int               `json:"k"`
	Models       map[string]string `json:"models"`
	Effort       string            `json:"effort"`
	MaxOutput    int64             `json:"max_output_tokens"`
	MaxInput     int64             `json:"max_input_bytes"`
	Endpoint     string            `json:"endpoint"`
	HostCommand  string            `json:"host_command"`
	HostModel    string            `json:"host_model"`
	Fingerprints map[string]string `json:"fingerprints"`
	Binary       string            `json:"locum_binary_sha256"`
}

// JournalMismatchError is a journal taken under other conditions. Its host turns were paid for,
// so removing it is the operator's act, never locum's.
type JournalMismatchError struct {
	Path   string
	Fields []string
}

func (e *JournalMismatchError) Error() string {
	return fmt.Sprintf("the capture journal %s was taken under other conditions (%s differ); restore them to resume, or remove the journal yourself to start over (its host turns were paid for)",
		e.Path, strings.Join(e.Fields, ", "))
}

// RecordExistsError is a capture whose record already exists: a record is captured once.
type RecordExistsError struct{ Path string }

func (e *RecordExistsError) Error() string {
	return fmt.Sprintf("%s exists: a record is captured once; remove it yourself to capture again, or choose another --name", e.Path)
}

// JournalPath is where the capture journal of a name lives: under the git directory.
func JournalPath(root, name string) string {
	if p := gitsafe.GitPath(root, "locum/ab-journal"); p != "" {
		return filepath.Join(p, name+".jsonl")
	}
	return filepath.Join(engine.RepoStateDir(root, "ab-journal"), name+".jsonl")
}

type journalLine struct {
	Kind       string      `json:"kind"` // conditions, host, turn
	Conditions *Conditions `json:"conditions,omitempty"`
	Version    string      `json:"host_version,omitempty"`
	Turn       *Turn       `json:"turn,omitempty"`
	// Digests are the local models' digests, as the server reported them when arm L ran.
	Digests map[string]string `json:"digests,omitempty"`
}

// Capture runs the A/B capture: arm L first (so a local failure stops it before any host call),
// then arm H; every turn is journalled before the next starts, and a capture under the same
// conditions resumes, re-running only the turns the journal lacks. It ends with the signed
// record written exclusively, the register beside it, and the journal removed.
func Capture(ctx context.Context, o CaptureOptions) (*Record, error) {
	recordPath := RecordPath(o.Root, o.Name)
	if _, err := os.Stat(recordPath); err == nil {
		return nil, &RecordExistsError{Path: recordPath}
	}
	cond, err := o.conditions(ctx)
	if err != nil {
		return nil, err
	}
	jpath := JournalPath(o.Root, o.Name)
	journal, done, hostVersion, err := openCaptureJournal(jpath, cond, o.logf)
	if err != nil {
		return nil, err
	}
	defer journal.close()
	write := journal.write
	if len(done) > 0 {
		o.logf("resuming %s: %d turns already in the journal\n", o.Name, len(done))
	}

	digests, err := o.localArm(ctx, done, write)
	if err != nil {
		return nil, err
	}
	if digests == nil {
		digests = journal.digests
	}

	version, err := o.Host.Version(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the host's version: %w", err)
	}
	if hostVersion != "" && hostVersion != version {
		return nil, &JournalMismatchError{Path: jpath, Fields: []string{"host version"}}
	}
	if hostVersion == "" {
		if err := write(journalLine{Kind: "host", Version: version}); err != nil {
			return nil, err
		}
	}
	for _, task := range Tasks() {
		for run := 1; run <= o.K; run++ {
			key := fmt.Sprintf("%s/%s/%d", ArmHost, task.ID, run)
			if _, ok := done[key]; ok {
				continue
			}
			ht, err := o.Host.Turn(ctx, task.Prompt, o.TurnTimeout)
			if err != nil {
				return nil, fmt.Errorf("host turn %s: %w", key, err)
			}
			// The answer graded is what the host printed, or the result text of the result object
			// it printed; that object's usage, where there is one, is what the turn cost the host.
			hr := ReadHostResult(ht.Output)
			t := Turn{Arm: ArmHost, Task: task.ID, Run: run, Model: o.HostModel, Completed: ht.Completed, Exit: ht.Exit,
				WallMs: ht.Wall.Milliseconds(), Output: hr.Answer, Evidence: []string{}, HostUsage: hr.Usage, UsageNote: hr.Note}
			if ht.Completed {
				g := task.Grade(hr.Answer)
				t.Passed, t.Evidence = g.Passed, g.Evidence
			} else {
				t.Error = ht.Detail
			}
			if err := write(journalLine{Kind: "turn", Turn: &t}); err != nil {
				return nil, err
			}
			done[key] = t
			o.logTurn(t)
		}
	}

	rec := o.record(cond, version, done)
	rec.Local.Digests = digests
	data, err := MarshalSigned(rec, o.Key)
	if err != nil {
		return nil, err
	}
	if _, err := untrusted.Confine(o.Root, recordPath); err != nil {
		return nil, err
	}
	if err := WriteExclusive(recordPath, data); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, &RecordExistsError{Path: recordPath}
		}
		return nil, err
	}
	if err := atomicfile.Write(RegisterPath(o.Root, o.Name), RenderRegister(rec, o.Roles), 0o644); err != nil {
		return rec, err
	}
	journal.close()
	os.Remove(jpath)
	return rec, nil
}

// localArm runs the local turns the journal lacks as one engine run: connect (the loopback
// rail), then a step per turn. The first step that fails stops the capture before any host call.
func (o CaptureOptions) localArm(ctx context.Context, done map[string]Turn, write func(journalLine) error) (map[string]string, error) {
	var digests map[string]string
	steps := []engine.Step{
		{Name: "connect", Run: func(_ context.Context, r *engine.Run) error { return r.Connect() }},
		{Name: "digests", Run: func(ctx context.Context, r *engine.Run) error {
			// A record earns routing for the weights it measured: a name the server does not
			// list would be judged on whatever it serves instead (llama-server answers any name).
			info, err := r.Client.Probe(ctx)
			if err != nil {
				return err
			}
			for _, m := range o.Models {
				if err := engine.RequireListed(info, r.Client.BaseURL(), m); err != nil {
					return &engine.RefusalError{Reason: err.Error() + ": a record of it would measure other weights"}
				}
			}
			all := r.Client.ModelWeights(ctx)
			digests = map[string]string{}
			for _, m := range o.Models {
				if d := all[m]; d != "" {
					digests[m] = d
				}
			}
			r.Emit(engine.DigestsEvent{Digests: digests})
			return write(journalLine{Kind: "digests", Digests: digests})
		}},
	}
	var failed error
	for _, task := range Tasks() {
		role := TaskRole(task.ID, o.Roles)
		for run := 1; run <= o.K; run++ {
			key := fmt.Sprintf("%s/%s/%d", ArmLocal, task.ID, run)
			if _, ok := done[key]; ok {
				continue
			}
			steps = append(steps, engine.Step{Name: "turn " + key, Run: func(ctx context.Context, r *engine.Run) error {
				t, err := o.localTurn(ctx, r, task, role, run)
				if err == nil {
					err = write(journalLine{Kind: "turn", Turn: &t})
				}
				if err != nil {
					failed = fmt.Errorf("local turn %s: %w", key, err)
					return err
				}
				done[key] = t
				o.logTurn(t)
				return nil
			}})
		}
	}
	if len(steps) == 2 {
		return nil, nil
	}
	spec := o.Local
	spec.Mode, spec.Root = Mode.Name, o.Root
	if spec.Routing == "" {
		spec.Routing = "operator"
	}
	if spec.Model == "" {
		spec.Model = joinModels(o.Models)
	}
	res := engine.Execute(ctx, spec, steps)
	if res.ExitCode == 0 {
		return digests, nil
	}
	if failed == nil {
		failed = context.Cause(ctx)
	}
	if failed == nil && res.Error != nil {
		// A step before any turn failed (the endpoint refused, say): keep what the run made of it.
		failed = &engine.ResultError{Result: res}
	}
	if failed == nil {
		failed = errors.New("the local arm stopped")
	}
	return nil, failed
}

// localTurn is one sample of a task by the local model, asked as every mode asks: the prompt under
// the input budget, streamed, at the settings' effort and output cap, classified before grading.
func (o CaptureOptions) localTurn(ctx context.Context, r *engine.Run, task Task, role string, run int) (Turn, error) {
	s := r.Spec.Settings
	seed := TurnSeed(o.Seed, task.ID, run)
	model := o.Models[role]
	if err := rails.CheckBudget("the "+task.ID+" prompt", int64(len(task.Prompt)), s.Int(packs.MaxInputBytes)); err != nil {
		return Turn{}, err
	}
	start := time.Now()
	res, err := r.Chat(ctx, fmt.Sprintf("turn %s/%s/%d", ArmLocal, task.ID, run), client.ChatRequest{Model: model, MaxTokens: s.Int(packs.MaxOutputTokens),
		Effort: s.String(packs.Effort), Seed: &seed, Stream: true, Messages: []client.Message{{Role: "user", Content: task.Prompt}}})
	t := Turn{Arm: ArmLocal, Task: task.ID, Run: run, Seed: &seed, Model: model, WallMs: time.Since(start).Milliseconds(), Evidence: []string{}}
	var reply *rails.ReplyError
	switch {
	case err == nil:
		t.Completed, t.Output, t.Reply = true, res.Answer, string(rails.ClassAnswer)
		g := task.Grade(res.Answer)
		t.Passed, t.Evidence = g.Passed, g.Evidence
	case errors.As(err, &reply):
		// The server answered; there is no answer to grade. That is an outcome, counted as a
		// failure to pass and as one the predicate could not attribute.
		t.Completed, t.Error, t.Reply = true, reply.Error(), string(reply.Class)
		t.Evidence = []string{"FAIL the reply was " + string(reply.Class)}
	default:
		return t, err
	}
	return t, nil
}

func (o CaptureOptions) record(cond Conditions, hostVersion string, done map[string]Turn) *Record {
	rec := &Record{
		Name: o.Name, Created: time.Now().UTC().Format(time.RFC3339), K: o.K, Seed: o.Seed,
		Local:  LocalArm{Models: o.Models, Effort: cond.Effort, Endpoint: cond.Endpoint},
		Host:   HostArm{Command: cond.HostCommand, Version: hostVersion, Model: o.HostModel},
		Commit: cond.Commit, Tree: cond.Tree, Machine: cond.Machine,
		Locum:        LocumBuild{Version: o.Version, BinarySHA256: o.BinarySHA},
		Fingerprints: cond.Fingerprints,
	}
	for _, t := range done {
		rec.Turns = append(rec.Turns, t)
	}
	SortTurns(rec.Turns)
	rec.Cells = FoldCells(rec.Turns)
	rec.Version = RecordVersion(rec.Turns)
	return rec
}

// SortTurns orders turns as a capture runs them: arm L, then H; tasks in order; runs ascending.
func SortTurns(turns []Turn) {
	order := map[string]int{}
	for i, t := range Tasks() {
		order[t.ID] = i
	}
	arm := map[string]int{ArmLocal: 0, ArmHost: 1}
	sort.Slice(turns, func(i, j int) bool {
		a, b := turns[i], turns[j]
		if arm[a.Arm] != arm[b.Arm] {
			return arm[a.Arm] < arm[b.Arm]
		}
		if order[a.Task] != order[b.Task] {
			return order[a.Task] < order[b.Task]
		}
		return a.Run < b.Run
	})
}

func (o CaptureOptions) conditions(ctx context.Context) (Conditions, error) {
	commit, tree, err := gitState(ctx, o.Root)
	if err != nil {
		return Conditions{}, err
	}
	s := o.Local.Settings
	c := Conditions{Commit: commit, Tree: tree, Machine: ThisMachine(), Seed: o.Seed, K: o.K, Models: o.Models, Effort: s.String(packs.Effort),
		MaxOutput: s.Int(packs.MaxOutputTokens), MaxInput: s.Int(packs.MaxInputBytes),
		Endpoint: s.String(packs.BaseURL), HostCommand: strings.Join(o.Host.Argv, " "), HostModel: o.HostModel,
		Fingerprints: map[string]string{}, Binary: o.BinarySHA}
	for _, t := range Tasks() {
		c.Fingerprints[t.ID] = t.Fingerprint()
	}
	return c, nil
}

func (c Conditions) differ(o Conditions) []string {
	var out []string
	check := func(name string, same bool) {
		if !same {
			out = append(out, name)
		}
	}
	check("commit", c.Commit == o.Commit)
	check("tree state", c.Tree == o.Tree)
	check("machine", c.Machine == o.Machine)
	check("seed", c.Seed == o.Seed)
	check("k", c.K == o.K)
	check("models", equalMaps(c.Models, o.Models))
	check("effort", c.Effort == o.Effort)
	check("output and input caps", c.MaxOutput == o.MaxOutput && c.MaxInput == o.MaxInput)
	check("endpoint", c.Endpoint == o.Endpoint)
	check("host command", c.HostCommand == o.HostCommand)
	check("host model", c.HostModel == o.HostModel)
	check("fingerprints", equalMaps(c.Fingerprints, o.Fingerprints))
	check("locum binary", c.Binary == o.Binary)
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// gitState is the commit and the state of the work tree: clean, or dirty with a hash of what
// differs, so a resumed capture knows the code under test did not move. git runs through
// gitsafe, so the repository's config runs nothing; a repository it refuses is an error.
func gitState(ctx context.Context, root string) (commit, tree string, err error) {
	head, err := gitsafe.Run(ctx, root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if refused(err) {
		return "", "", err
	}
	if err != nil {
		return "none", "not a git repository, or no commit yet", nil
	}
	status, err := gitsafe.Run(ctx, root, "status", "--porcelain")
	if refused(err) {
		return "", "", err
	}
	if strings.TrimSpace(status) == "" {
		return strings.TrimSpace(head), "clean", nil
	}
	diff, err := gitsafe.Run(ctx, root, "diff", "HEAD")
	if refused(err) {
		return "", "", err
	}
	sum := sha256.Sum256([]byte(status + "\x00" + diff))
	return strings.TrimSpace(head), "dirty:" + hex.EncodeToString(sum[:8]), nil
}

// refused reports whether err is gitsafe refusing the repository, rather than git failing.
func refused(err error) bool {
	var conf *gitsafe.ConfigError
	var missing *gitsafe.MissingObjectsError
	return errors.As(err, &conf) || errors.As(err, &missing)
}

func (o CaptureOptions) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format, args...)
	}
}

func (o CaptureOptions) logTurn(t Turn) {
	verdict := "failed"
	switch {
	case !t.Completed:
		verdict = "did not complete"
	case t.Passed:
		verdict = "passed"
	}
	usage := ""
	if u := t.HostUsage; u != nil {
		turns := "turns"
		if u.NumTurns == 1 {
			turns = "turn"
		}
		usage = fmt.Sprintf(", host measured %d %s, %d tokens, $%.4f", u.NumTurns, turns, u.Tokens(), u.TotalCostUSD)
	}
	o.logf("turn %s %s %d/%d %s (%dms%s)\n", t.Arm, t.Task, t.Run, o.K, verdict, t.WallMs, usage)
	if t.UsageNote != "" {
		o.logf("  no host usage: %s\n", untrusted.Escape(t.UsageNote))
	}
}

// BinarySHA256 is the hash of the running locum, part of a capture's conditions.
func BinarySHA256() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(exe)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Mode is the eval mode: screens and A/B captures, each turn asked of a chat model.
var Mode = engine.Mode{Name: "eval", Model: engine.ChatModel, Settings: slices.Concat(packs.ChatSettings, []packs.Key{packs.K})}

func init() { engine.RegisterMode(Mode) }
