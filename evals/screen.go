package evals

import (
	"context"
	"errors"
	"fmt"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
)

// ScreenResult is one task's sample in a screen.
type ScreenResult struct {
	Task  string `json:"task"`
	Grade Grade  `json:"grade"`
	Reply string `json:"reply_class"`
}

// ScreenDetails are a screen's part of its result and of its journal's run_end: each task's
// sample, once every task was sampled.
type ScreenDetails struct {
	Screen []ScreenResult `json:"screen"`
}

// ScreenSteps samples each task once with the run's model and grades it. A screen has no
// baseline arm, so it earns no routing whatever it finds; it is red when any task fails.
func ScreenSteps(tasks []Task, results *[]ScreenResult) []engine.Step {
	steps := []engine.Step{{Name: "connect", Run: func(ctx context.Context, r *engine.Run) error { return r.ConnectChat(ctx) }}}
	for _, task := range tasks {
		steps = append(steps, engine.Step{Name: "screen " + task.ID, Run: func(ctx context.Context, r *engine.Run) error {
			s := r.Spec.Settings
			if err := rails.CheckBudget("the "+task.ID+" prompt", int64(len(task.Prompt)), s.Int(packs.MaxInputBytes)); err != nil {
				return err
			}
			// Streamed like every mode, so the receipt splits prefill from decode.
			res, err := r.Chat(ctx, "screen "+task.ID, client.ChatRequest{Model: r.Spec.Model, MaxTokens: s.Int(packs.MaxOutputTokens),
				Effort: s.String(packs.Effort), Stream: true, Messages: []client.Message{{Role: "user", Content: task.Prompt}}})
			out := ScreenResult{Task: task.ID, Reply: string(rails.ClassAnswer)}
			var reply *rails.ReplyError
			switch {
			case err == nil:
				out.Grade = task.Grade(res.Answer)
			case errors.As(err, &reply):
				out.Reply = string(reply.Class)
				out.Grade = Grade{Evidence: []string{"FAIL the reply was " + string(reply.Class) + ": " + reply.Error()}}
			default:
				return err
			}
			*results = append(*results, out)
			return nil
		}})
	}
	steps = append(steps, engine.Step{Name: "verdict", Run: func(_ context.Context, r *engine.Run) error {
		failed := 0
		for _, res := range *results {
			if !res.Grade.Passed {
				failed++
			}
		}
		r.SetDetails(&ScreenDetails{Screen: *results})
		if failed > 0 {
			return &engine.RedError{Reason: fmt.Sprintf("the screen failed %d of %d tasks; a screen earns no routing either way (that takes locum eval --ab)", failed, len(*results))}
		}
		return nil
	}})
	return steps
}

// ScreenJob is a screen as a job of the eval mode, for the job layer to run: the tasks sampled
// once each with the run's model and graded, Results filled as the run goes. A bench runs one
// task a job, on each model it compares.
type ScreenJob struct {
	Tasks   []Task
	Results []ScreenResult
}

// Mode is the eval mode.
func (*ScreenJob) Mode() engine.Mode { return Mode }

// Steps are the screen's steps (ScreenSteps).
func (j *ScreenJob) Steps(engine.Place) []engine.Step { return ScreenSteps(j.Tasks, &j.Results) }
