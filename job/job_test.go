package job

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/schema"
)

// probeJob is a job of a test's own: the layer runs it as any mode's, with its own steps, and it
// keeps the place it was given.
type probeJob struct {
	task  string
	paths []engine.NamedPath
	got   *engine.Place
}

// The probe borrows a declared mode's settings; its steps are its own.
func (*probeJob) Mode() engine.Mode { return engine.Mode{Name: "transform", Model: engine.ChatModel} }

func (j *probeJob) TaskText() (string, string) { return "the task", j.task }
func (j *probeJob) Paths() []engine.NamedPath  { return j.paths }

func (j *probeJob) Steps(p engine.Place) []engine.Step {
	return []engine.Step{{Name: "probe", Run: func(context.Context, *engine.Run) error {
		*j.got = p
		return nil
	}}}
}

func newLayer(t *testing.T, env map[string]string, flags map[string]string, callModels bool) *Layer {
	t.Helper()
	root := t.TempDir()
	gittest.Init(t, root)
	require.NoError(t, os.Mkdir(filepath.Join(root, "notes"), 0o755))
	v, err := schema.New()
	require.NoError(t, err)
	home := t.TempDir()
	env["XDG_STATE_HOME"] = filepath.Join(home, "state")
	env["XDG_CONFIG_HOME"] = filepath.Join(home, "config")
	env["HOME"] = home
	l, err := New(Operator{Dir: root, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Flags: flags, CallModels: callModels, Version: "test"}, v)
	require.NoError(t, err)
	return l
}

func TestPrepareAndRun(t *testing.T) {
	l := newLayer(t, map[string]string{}, map[string]string{"max-input-bytes": "100"}, false)
	j := &probeJob{task: "a task", got: &engine.Place{}}
	p, err := l.Prepare(context.Background(), j.Mode(), Call{Model: "m"})
	require.NoError(t, err)
	assert.Equal(t, "m", p.Model())
	assert.Equal(t, "operator", p.Routing())
	res, err := p.Run(context.Background(), j)
	require.NoError(t, err)
	assert.Equal(t, engine.StatusOK, res.Status, "%+v", res.Error)
	assert.Equal(t, l.Root(), j.got.Root)
	assert.EqualValues(t, 100, j.got.Settings.Int(packs.MaxInputBytes), "the operator's flag")
	key := j.got.RollbackKey()
	assert.Len(t, key, 32, "the operator's crash-record key, made on first use")
}

func TestRefusedBeforeTheRun(t *testing.T) {
	cases := []struct {
		name       string
		flags      map[string]string
		callModels bool
		call       Call
		job        *probeJob
		prepare    bool // refused by Prepare, not by Run
		kind       string
		want       string
	}{
		{"a tool call names a model the operator did not allow", nil, false, Call{Tool: true, Model: "m"}, &probeJob{}, true, "refused", "never one a call names"},
		{"the operator names one", nil, false, Call{Model: "m"}, &probeJob{task: "t"}, false, "", ""},
		{"a call's budget above the operator's", map[string]string{"max-input-bytes": "50"}, true,
			Call{Tool: true, Model: "m", Args: map[string]string{"max_input_bytes": "5000"}}, &probeJob{}, true, "bad_input", "never raise it"},
		{"a task over the budget", nil, true, Call{Tool: true, Model: "m", Args: map[string]string{"max_input_bytes": "4"}}, &probeJob{task: "twelve bytes"}, false, "input_budget", "the task is 12 bytes, over the input budget of 4 bytes"},
		{"a tool call's path out of the repository", nil, true, Call{Tool: true, Model: "m"},
			&probeJob{paths: []engine.NamedPath{{Arg: "dir", Path: "/etc"}}}, false, "refused", "/etc: outside the repository"},
		{"the operator's path out of the repository", nil, false, Call{Model: "m"},
			&probeJob{paths: []engine.NamedPath{{Arg: "dir", Path: "/etc"}}}, false, "", ""},
		{"a tool call's path inside", nil, true, Call{Tool: true, Model: "m"},
			&probeJob{paths: []engine.NamedPath{{Arg: "dir", Path: "notes"}}}, false, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayer(t, map[string]string{}, tc.flags, tc.callModels)
			tc.job.got = &engine.Place{}
			p, err := l.Prepare(context.Background(), tc.job.Mode(), tc.call)
			if tc.prepare {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				_, err = p.Run(context.Background(), tc.job)
			}
			if tc.kind == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			_, kind, _ := engine.Classify(err)
			assert.Equal(t, tc.kind, kind)
			res := l.NotStarted(tc.job.Mode(), tc.call, err)
			assert.Contains(t, res.Error.Message, tc.want)
			assert.Equal(t, 0, res.Attempts)
			assert.Nil(t, tc.job.got.Settings, "no step ran")
		})
	}
}

func TestNotStartedInTheFrontEndsWords(t *testing.T) {
	err := &rails.BudgetError{What: "the task", Size: 12, Limit: 4, Remedy: "shorten the task"}
	mode := engine.Mode{Name: "transform", Model: engine.ChatModel}
	l := newLayer(t, map[string]string{}, nil, false)
	cli := l.NotStarted(mode, Call{Model: "m"}, err)
	tool := l.NotStarted(mode, Call{Tool: true, Model: "m", ArgName: func(s string) string { return "`" + s + "`" }}, err)
	assert.Contains(t, cli.Error.Message, "--max-input-bytes")
	assert.Contains(t, tool.Error.Message, "`max_input_bytes`")
	assert.Equal(t, "operator", *cli.Routing)
	assert.Nil(t, tool.Routing, "a call may not name a model here: no operator's choice to report")
	allowed := newLayer(t, map[string]string{}, nil, true)
	assert.Equal(t, "operator", *allowed.NotStarted(mode, Call{Tool: true, Model: "m"}, err).Routing)
	assert.Nil(t, l.NotStarted(mode, Call{Model: "m", RoleGiven: true}, err).Routing, "a role and a model: not the operator's choice")
	assert.Nil(t, l.NotStarted(engine.Mode{Name: "dedup", Model: engine.EmbeddingModel}, Call{Model: "e"}, err).Routing, "an embedding model is a setting, not a route")
}

// The routing a run that never began reports is the one Prepare would have chosen, and
// CheckCallModel refuses exactly the named model a call may not name.
func TestNamedRouting(t *testing.T) {
	chat := engine.Mode{Name: "transform", Model: engine.ChatModel}
	embed := engine.Mode{Name: "dedup", Model: engine.EmbeddingModel}
	for _, tc := range []struct {
		name       string
		callModels bool
		mode       engine.Mode
		call       Call
		want       string
		refused    bool
	}{
		{"the operator names a model", false, chat, Call{Model: "m"}, "operator", false},
		{"the operator names a role and a model", false, chat, Call{Model: "m", RoleGiven: true}, "", false},
		{"the operator names none", false, chat, Call{}, "", false},
		{"a model of a mode that asks no chat model", false, embed, Call{Model: "e"}, "", false},
		{"a tool call names a model, not allowed", false, chat, Call{Tool: true, Model: "m"}, "", true},
		{"a tool call names a model, allowed", true, chat, Call{Tool: true, Model: "m"}, "operator", false},
		{"a tool call names a role and a model", false, chat, Call{Tool: true, Model: "m", RoleGiven: true}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := Operator{CallModels: tc.callModels}
			assert.Equal(t, tc.want, op.NamedRouting(tc.mode, tc.call))
			l := &Layer{op: op}
			if tc.refused {
				assert.ErrorIs(t, l.CheckCallModel(tc.call), errCallModel)
			} else {
				assert.NoError(t, l.CheckCallModel(tc.call))
			}
		})
	}
}

// A link outside the repository that leads into it is no way in for a call: it could be
// pointed elsewhere before the read.
func TestCallPathNamedOutsideTheRepository(t *testing.T) {
	l := newLayer(t, map[string]string{}, nil, true)
	link := filepath.Join(t.TempDir(), "l")
	require.NoError(t, os.Symlink(filepath.Join(l.Root(), "notes"), link))
	j := &probeJob{paths: []engine.NamedPath{{Arg: "dir", Path: link}}, got: &engine.Place{}}
	p, err := l.Prepare(context.Background(), j.Mode(), Call{Tool: true, Model: "m"})
	require.NoError(t, err)
	_, err = p.Run(context.Background(), j)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "outside the repository")
	inside := &probeJob{paths: []engine.NamedPath{{Arg: "dir", Path: filepath.Join(l.Root(), "notes")}}, got: &engine.Place{}}
	_, err = p.Run(context.Background(), inside)
	assert.NoError(t, err, "an absolute path inside the repository is the repository's")
}

// Without a state directory there is no crash record: the mode is told so with a nil key, and
// the operator is warned, naming the mode.
func TestNoRollbackKeyIsAWarning(t *testing.T) {
	root := t.TempDir()
	gittest.Init(t, root)
	v, err := schema.New()
	require.NoError(t, err)
	var warned strings.Builder
	state := filepath.Join(t.TempDir(), "state-is-a-file")
	require.NoError(t, os.WriteFile(state, nil, 0o600))
	env := map[string]string{"XDG_STATE_HOME": state, "XDG_CONFIG_HOME": t.TempDir(), "HOME": t.TempDir()}
	l, err := New(Operator{Dir: root, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Stderr: &warned}, v)
	require.NoError(t, err)
	j := &probeJob{got: &engine.Place{}}
	p, err := l.Prepare(context.Background(), j.Mode(), Call{Model: "m"})
	require.NoError(t, err)
	_, err = p.Run(context.Background(), j)
	require.NoError(t, err)
	assert.Nil(t, j.got.RollbackKey())
	assert.Contains(t, warned.String(), "locum transform: warning: no crash record will be kept")
}
