package transform

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

func TestObserverHearsEachStage(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	reply := "```\nb\n```"
	s.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &reply})
	root := t.TempDir()
	file := filepath.Join(root, "a.txt")
	require.NoError(t, os.WriteFile(file, []byte("a\n"), 0o644))

	var events []engine.ProgressEvent
	spec := engine.RunSpec{Mode: "transform", Root: root, Settings: runtest.SettingsFor(t, s.BaseURL()), Model: runtest.Model, Routing: "operator",
		JournalPath: filepath.Join(root, "run.jsonl"), Observer: engine.ObserverFunc(func(ev engine.ProgressEvent) { events = append(events, ev) })}
	res := engine.Execute(context.Background(), spec, Steps(Options{File: "a.txt", Verify: "true", Task: "make it b", Cwd: root, Root: root}))
	require.Nil(t, res.Error, "%+v", res.Error)

	var stages []engine.Stage
	for _, ev := range events {
		if len(stages) == 0 || stages[len(stages)-1] != ev.Stage {
			stages = append(stages, ev.Stage)
		}
	}
	// The baseline's verify comes first, before any request; the mutants of the kept span last.
	assert.Equal(t, []engine.Stage{engine.StageVerify, engine.StagePrefill, engine.StageDecode, engine.StageVerify, engine.StageMutants}, stages)
	assert.Equal(t, "baseline", events[0].Step)
	var last, verify, mutants engine.ProgressEvent
	for _, ev := range events {
		switch ev.Stage {
		case engine.StageDecode:
			last = ev
		case engine.StageVerify:
			verify = ev
		case engine.StageMutants:
			mutants = ev
		}
	}
	assert.Equal(t, len(reply), last.Chars, "the last decode event counts the whole reply")
	assert.Positive(t, last.Deltas)
	assert.Equal(t, 1, verify.Attempt)
	assert.Equal(t, mutants.Done+1, mutants.Total, "the last mutant's event counts it")
}
