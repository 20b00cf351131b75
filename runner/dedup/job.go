package dedup

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// Mode is the dedup mode: a screen of a folder's entries, by an embedding model. Its requests
// are embedding batches, not attempts at one answer, and its receipt calls them so.
var Mode = engine.Mode{Name: "dedup", Model: engine.EmbeddingModel, Counts: "requests",
	Prior: cost.ReadPrior(9, 400), Step: stepJob, Tool: tool,
	Settings: slices.Concat(packs.HostSettings, []packs.Key{packs.EmbedModel, packs.Threshold, packs.Method, packs.Exact, packs.BatchSize, packs.Glob, packs.CacheMaxMiB}),
	StepInputs: []packs.StepInput{
		{Name: "dir", Doc: "the folder whose entries are screened, from the repository root", Kind: packs.InputPath},
		packs.SettingInput(packs.Glob),
	}}

func init() { engine.RegisterMode(Mode) }

// Job is a request for one screen. Found is what it found once the run scored the pairs.
type Job struct {
	Dir     string
	NoCache bool
	// Keep, when above 0, keeps only the highest pairs (Options.Keep).
	Keep int
	// Pairs lists pairs rather than groups (Options.Pairs).
	Pairs bool
	Found Result
}

// Mode is the dedup mode.
func (*Job) Mode() engine.Mode { return Mode }

// Paths is the folder the screen reads.
func (j *Job) Paths() []engine.NamedPath { return []engine.NamedPath{{Arg: "dir", Path: j.Dir}} }

// Steps are the screen's steps; they fill j.Found.
func (j *Job) Steps(p engine.Place) []engine.Step {
	opts := Options{Dir: j.Dir, Cwd: p.Cwd, Root: p.Root, NoCache: j.NoCache, Keep: j.Keep, Pairs: j.Pairs}
	if p.CacheDir != "" {
		opts.Cache = VectorCache{Path: filepath.Join(p.CacheDir, CacheFileName), MaxBytes: p.Settings.Int(packs.CacheMaxMiB) << 20}
	}
	return Steps(opts, &j.Found)
}

// tool is the dedup tool; the text beside its result says what the structured content does not.
var tool = &engine.Tool{
	Description: "Screen a folder of notes for near-duplicates by embeddings (or words: method lexical). Returns " +
		"locum's --json result: details.groups, files whose pairs score at or above threshold. A group is a " +
		"candidate to judge, not a verdict.",
	Args: []engine.ToolArg{{Name: "dir", Required: true}, {Name: "pairs", Doc: "list the pairs instead of groups", Bool: true}, {Name: "no_cache", Bool: true}},
	Job: func(a engine.ToolArgs) (engine.ToolJob, error) {
		j := &Job{Dir: a.String("dir"), NoCache: a.Bool("no_cache"), Pairs: a.Bool("pairs")}
		return engine.ToolJob{Job: j, Note: func(out *engine.Result) string {
			if out.Error != nil {
				return ""
			}
			return toolNotes(&j.Found)
		}}, nil
	},
}

// toolNotes are what a screen's structured content does not say, for a host: why it compared
// words, which embedding model it picked, a warning, a cache it could not use.
func toolNotes(found *Result) string {
	var notes []string
	if found.Why != "" {
		notes = append(notes, "comparing words, not embeddings: "+found.Why+"; name an embedding model (model) for a screen by meaning")
	}
	if found.Picked != "" {
		notes = append(notes, "embedding with "+untrusted.Escape(found.Picked)+", "+client.PickedEmbedSource+"; the model argument names another")
	}
	if w := found.Warning(); w != "" {
		notes = append(notes, w)
	}
	if found.CacheProblem != "" {
		notes = append(notes, "the embedding cache was not used: "+untrusted.Escape(found.CacheProblem))
	}
	return strings.Join(notes, "; ")
}

// stepJob is a workflow item's screen of the folder the step's inputs name (their glob a setting
// the workflow applies); it passes forward the groups it found, one line each.
func stepJob(it engine.StepItem) (engine.StepJob, error) {
	j := &Job{Dir: it.Input("dir")}
	return engine.StepJob{Job: j, Output: func() string {
		var b strings.Builder
		for i, g := range j.Found.Groups {
			fmt.Fprintf(&b, "group %d: %s\n", i+1, strings.Join(g.Files, " "))
		}
		return b.String()
	}}, nil
}

// ScriptBytes is the script a host would write to screen a folder itself, the cheapest way it
// gets a lexical screen's answer: word shingles, Jaccard, union-find, in about 550 bytes of
// shell and awk (one such script returned a lexical screen's exact groups of a real folder).
const ScriptBytes = 550

// HostWork is a screen's counterfactual: the cheaper for the host of reading the folder's read
// bytes in one turn, or writing the script and reading its output, about as long as the
// result, in one turn. A screen by embeddings may find what the script does not; the estimate
// does not credit that.
func HostWork(read int64, p cost.Params) engine.HostWork {
	turns := cost.Turns{Direct: 1, Delegated: 1}
	reading := float64(p.Tokens(read)) * p.Prices.In
	scripting := float64(p.Tokens(ScriptBytes)) * p.Prices.Out
	if reading <= scripting {
		return engine.HostWork{Read: read, Turns: turns}
	}
	return engine.HostWork{Write: ScriptBytes, ResultInDirect: true, Turns: turns}
}
