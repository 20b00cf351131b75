package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
)

func TestNotStarted(t *testing.T) {
	tests := []struct {
		name       string
		code       int
		err        error
		wantStatus Status
		wantKind   string
	}{
		{"a refusal keeps its kind", 1, &RefusalError{Reason: "no routing"}, StatusRefused, "refused"},
		{"a budget refusal keeps its kind", 1, fmt.Errorf("task: %w", &rails.BudgetError{What: "the task", Size: 9, Limit: 4}), StatusRefused, "input_budget"},
		{"bad input", 2, &BadInputError{Reason: "--file is required"}, StatusError, "bad_input"},
		{"an unknown error under exit 2 is bad input", 2, errors.New("workspace.json: line 1"), StatusError, "bad_input"},
		{"an unknown error under exit 1 is a refusal", 1, errors.New("refusing"), StatusRefused, "refused"},
		{"the caller's code wins over the error's", 2, &RefusalError{Reason: "x"}, StatusError, "bad_input"},
		{"no error still says why", 2, nil, StatusError, "bad_input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := NotStarted("transform", "", "", tt.code, tt.err)
			assert.Equal(t, tt.wantStatus, res.Status)
			assert.Equal(t, tt.code, res.ExitCode)
			require.NotNil(t, res.Error)
			assert.Equal(t, tt.wantKind, res.Error.Kind)
			assert.NotEmpty(t, res.Error.Message)
			assert.Regexp(t, `^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$`, res.RunID)
			assert.Nil(t, res.Model)
			assert.Nil(t, res.Journal)
			assert.Zero(t, res.Attempts)
			assert.Contains(t, res.Receipt(), string(tt.wantStatus)+" mode=transform model=? attempts=0 ")
		})
	}
	res := NotStarted("transform", "m", "operator", 2, errors.New("x"))
	require.NotNil(t, res.Model)
	assert.Equal(t, "m", *res.Model)
	assert.Equal(t, "operator", *res.Routing)
}

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{{0, "0 files"}, {1, "1 file"}, {2, "2 files"}} {
		assert.Equal(t, tt.want, client.Count(tt.n, "file", "files"))
	}
}

func TestClassifyKeepsARunsOwnResult(t *testing.T) {
	res := NotStarted("eval", "m", "operator", 1, &rails.OffLoopbackError{})
	status, kind, code := Classify(fmt.Errorf("capture: %w", &ResultError{Result: res}))
	assert.Equal(t, StatusRefused, status)
	assert.Equal(t, res.Error.Kind, kind)
	assert.Equal(t, 1, code)
}

// The client's typed errors are what the exit-code mapping decides on; the client's own tests
// show which reply makes which error.
func TestClassifyClientErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus Status
		wantKind   string
		wantCode   int
	}{
		{"a prompt over the loaded context", fmt.Errorf("chat: %w", &client.ContextError{}), StatusRefused, "context_window", 1},
		{"a prompt the server cut", fmt.Errorf("chat: %w", &client.InputTruncatedError{}), StatusError, "input_truncated", 2},
		{"a server loading its model", fmt.Errorf("probe: %w", &client.LoadingError{Server: "llama-server"}), StatusError, "loading", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, kind, code := Classify(tt.err)
			assert.Equal(t, tt.wantStatus, status)
			assert.Equal(t, tt.wantKind, kind)
			assert.Equal(t, tt.wantCode, code)
		})
	}
}

// gitsafe's refusals of a repository are refusals; git failing is not.
func TestClassifyGitErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus Status
		wantKind   string
		wantCode   int
	}{
		{"git config locum runs no git under", fmt.Errorf("worktree: %w", &gitsafe.ConfigError{Key: "core.worktree"}), StatusRefused, "refused", 1},
		{"a partial clone lacking an object", fmt.Errorf("worktree: %w", &gitsafe.MissingObjectsError{Args: []string{"checkout"}}), StatusRefused, "partial_clone", 1},
		{"a file to edit in a git directory", fmt.Errorf("scope: %w", &gitsafe.GitDirError{Path: ".git/config", Dir: ".git"}), StatusRefused, "git_dir", 1},
		{"a file linked where an edit must not reach", fmt.Errorf("scope: %w", &rails.HardLinkError{Path: "hl", Links: 2, Found: 1}), StatusRefused, "hard_link", 1},
		{"git failing", fmt.Errorf("worktree: %w", &gitsafe.Error{Args: []string{"checkout"}}), StatusError, "internal", 2},
		{"a directory locum cannot read before the verify", fmt.Errorf("baseline: %w", &rails.UnreadableTreeError{Tree: "/r", Dirs: []string{"d"}}), StatusRefused, "tree_unchecked", 1},
		{"a tree too large before the verify", &rails.TreeTooLargeError{Tree: "/r", Limit: 1, What: "entries"}, StatusRefused, "tree_unchecked", 1},
		{"a tree too large after the verify", &rails.PlantedGitError{Tree: "/r", TooLarge: &rails.TreeTooLargeError{Tree: "/r", Limit: 1, What: "entries"}}, StatusError, "verify_planted_git", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, kind, code := Classify(tt.err)
			assert.Equal(t, tt.wantStatus, status)
			assert.Equal(t, tt.wantKind, kind)
			assert.Equal(t, tt.wantCode, code)
		})
	}
}
