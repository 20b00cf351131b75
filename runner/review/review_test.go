package review

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/engine"
)

// branchingDetails are the details of the test's mode that leaves a branch.
type branchingDetails struct {
	Status string `json:"status"`
}

// A run is reviewable only when its journal's name is a run id, its mode registered how its
// branch is named, and that branch is there; the base and commit are taken only as full ids.
func TestFindNamesTheBranchOfARegisteredMode(t *testing.T) {
	Register("test-branching", func(id string) string { return "test/" + id },
		func(d json.RawMessage) string { return engine.DecodeDetails[branchingDetails](d).Status })
	root := gittest.Repo(t, map[string]string{"a.txt": "a\n"})
	base := strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD"))
	const id = "20261130T100000Z-aaaaaa"
	gittest.Git(t, root, "branch", "test/"+id)
	dir, err := engine.RunsDir(root)
	require.NoError(t, err)
	journal := func(name, mode string) {
		j, err := engine.OpenJournal(filepath.Join(dir, name+".jsonl"), name)
		require.NoError(t, err)
		j.Emit(engine.RunStartEvent{Mode: mode})
		j.Emit(engine.WorktreeEvent{Base: base})
		j.Emit(engine.BranchCommitEvent{Commit: "not-a-sha"})
		details, err := json.Marshal(branchingDetails{Status: StatusCompleted})
		require.NoError(t, err)
		j.Emit(engine.RunEndEvent{Details: details})
		require.NoError(t, j.Close())
	}
	journal(id, "test-branching")
	journal("20261130T110000Z-bbbbbb", "transform")
	journal("20261130T120000Z-cccccc", "test-branching")
	journal("not-a-run-id", "test-branching")

	rv, err := Find(context.Background(), root, id)
	require.NoError(t, err)
	assert.Equal(t, Review{Root: root, RunID: id, Branch: "test/" + id, Base: base, Status: StatusCompleted,
		journal: filepath.Join(root, ".git", "locum", "runs", id+".jsonl"), ended: true}, *rv)

	for _, tc := range []struct {
		name, id string
		notARun  bool
	}{
		{"a mode that leaves no branch", "20261130T110000Z-bbbbbb", true},
		{"a journal not named as a run", "not-a-run-id", true},
		{"no run of that name", "nope", true},
		{"its branch is gone", "20261130T120000Z-cccccc", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Find(context.Background(), root, tc.id)
			var nr *NotReviewableError
			require.ErrorAs(t, err, &nr)
			assert.Equal(t, tc.notARun, nr.NotARun, nr.Reason)
		})
	}
}
