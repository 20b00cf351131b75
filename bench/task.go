package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/locumdev/locum/runner/engine"
)

// The sources a bench's tasks come from, as its table and journal name them.
const (
	SourceEvals  = "evals"
	SourceFolder = "folder"
	SourceReplay = "journal"
)

// PromptTask is a task that is a prompt graded by a predicate, with no tree: one of the pack's
// eval tasks. Cell makes a new job that asks it of the cell's model, and a function that says,
// once the job ran, what the predicate made of the reply.
type PromptTask struct {
	ID          string
	Fingerprint string
	Cell        func() (job engine.Job, grade func() Graded)
}

// task is one task of a bench, asked of every model.
type task struct {
	key, source, fingerprint string
	prompt                   *PromptTask
	edit                     *editTask
}

// editTask is a task that changes a tree: a job of a mode that edits, built from its tool's
// arguments, run at a commit, and judged by an oracle where it has one.
type editTask struct {
	mode engine.Mode
	args engine.ToolArgs
	// commit is the commit each cell starts from.
	commit string
	// oracle, where set, says whether a kept change is right (a bench folder's).
	oracle *oracle
	// verdict is a person's word on the run replayed (accepted, rejected), and original the
	// commit that run made: a cell that makes the same change carries the verdict.
	verdict, original string
}

// oracle is a bench folder's oracle: a command run on a copy of the kept tree with hidden files
// laid over it.
type oracle struct {
	command string
	files   []oracleFile
}

// fingerprintOf is the SHA-256 of parts as JSON: two tasks with the same fingerprint ask the same
// of a model and judge it the same, so a resumed bench takes a cell of the one for the other.
func fingerprintOf(parts ...any) string {
	data, _ := json.Marshal(parts)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// takesFrom says a mode's tool starts its work at a commit it is given (its `from`), on a
// branch of its own, rather than in the tree it is placed in.
func takesFrom(m engine.Mode) bool {
	for _, a := range m.Tool.Args {
		if a.Name == toolArgFrom {
			return true
		}
	}
	return false
}

// The tool arguments a bench fills from a task: the span, what to do, the verify, and for a mode
// that starts its own branch, the commit to start at.
const (
	toolArgFile   = "file"
	toolArgLines  = "lines"
	toolArgSymbol = "symbol"
	toolArgTask   = "task"
	toolArgVerify = "verify"
	toolArgFrom   = "from"
)

// toolArgs are the arguments of m's tool that values gives, and whether every argument the tool
// requires is among them.
func toolArgs(m engine.Mode, values map[string]string) (engine.ToolArgs, bool) {
	out := engine.ToolArgs{}
	for _, a := range m.Tool.Args {
		v := values[a.Name]
		switch {
		case v != "":
			out[a.Name] = v
		case a.Required:
			return nil, false
		}
	}
	return out, true
}
