package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/review"
	"github.com/locumdev/locum/untrusted"
)

// Mode is the agent mode: a verify-gated multi-file task in a worktree of its own.
var Mode = engine.Mode{Name: "agent", Model: engine.ChatModel, Outcome: outcome, Tool: tool,
	Settings: slices.Concat(packs.ChatSettings, packs.VerifySettings, packs.HostSettings, []packs.Key{packs.RoleSetting, packs.ExpectRed, packs.NoBaseline, packs.MaxTurns, packs.VerifyRounds, packs.StallTurns})}

func init() {
	engine.RegisterMode(Mode)
	review.Register(Mode.Name, Branch, func(details json.RawMessage) string {
		if status := engine.DecodeDetails[engine.AgentDetails](details).Status; status != nil {
			return *status
		}
		return ""
	})
}

// Job is a request for one agent run.
type Job struct {
	Task, Verify string
	// TaskSource is what to call the task in a refusal; "" is "the task".
	TaskSource string
	// From is the commit the branch starts at; "" is HEAD.
	From string
	// Keep leaves the worktree and branch of a run that did not complete.
	Keep bool
}

// Mode is the agent mode.
func (Job) Mode() engine.Mode { return Mode }

// TaskText is the task the first prompt carries, held to the input budget before the run.
func (j Job) TaskText() (what, text string) { return j.TaskSource, j.Task }

// Steps are the agent's steps.
func (j Job) Steps(p engine.Place) []engine.Step {
	return Steps(Options{Task: j.Task, Verify: j.Verify, From: j.From, Root: p.Root, Keep: j.Keep})
}

// tool is the agent tool: the work goes on a branch of its own, never into the user's tree, so
// a call destroys nothing; the person takes the branch or not.
var tool = &engine.Tool{
	Description: "Do a multi-file task with the local model in a worktree of its own, committed only if `verify` exits 0. " +
		"The work is on details.branch, for the person to accept with locum runs accept RUN_ID; runs_show shows its diff. " +
		"isError: RED (details.status says why), REFUSED, ERROR.",
	Branches: true,
	Args: []engine.ToolArg{
		{Name: "task", Doc: "what to do, in plain words", Required: true},
		engine.VerifyArg,
		{Name: "from", Doc: "the commit to start at; default HEAD"},
	},
	Job: func(a engine.ToolArgs) (engine.ToolJob, error) {
		j := Job{Task: a.String("task"), Verify: a.String("verify"), From: a.String("from")}
		return engine.ToolJob{Job: j, Argv: []string{j.Task}}, nil
	},
}

// outcome is the run's one line: its status, and where the work is.
func outcome(res *engine.Result) string {
	d, ok := res.Details.(*engine.AgentDetails)
	if !ok || d.Status == nil || *d.Status == "" {
		return ""
	}
	line := "agent: " + *d.Status
	if n := d.Turns; n > 0 {
		line += fmt.Sprintf(" after %d turn", n)
		if n > 1 {
			line += "s"
		}
	}
	if d.Branch != nil {
		line += " on branch " + untrusted.Escape(*d.Branch)
	}
	if d.DiffStat != nil && *d.DiffStat != "" {
		line += ": " + untrusted.Escape(strings.TrimSpace(*d.DiffStat))
	}
	if d.Worktree != nil {
		line += ", worktree kept at " + untrusted.Escape(*d.Worktree)
	}
	return line + engine.ShownWords(d.Shown, "the run")
}
