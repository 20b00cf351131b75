package job

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/schema"
)

// offLoopback is an endpoint the loopback rail refuses before any request, so a status of it
// asks nothing of the network.
const offLoopback = "http://192.0.2.1:1234/v1"

func backticked(s string) string { return "`" + s + "`" }

// breakWorkspace makes the layer's workspace file one no schema accepts.
func breakWorkspace(t *testing.T, l *Layer) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(l.Root(), ".locum"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(l.Root(), packs.WorkspaceFile), []byte("{not json"), 0o644))
}

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  map[string]string
		req    StatusRequest
		broken bool
		// wantErr: "workspace" for a *WorkspaceError, "other" for any other error.
		wantErr    string
		kind, says string
		// chat and embed are the sources the report names for the models the request names.
		chat, embed string
	}{
		{name: "the operator's endpoint off loopback", flags: map[string]string{"base-url": offLoopback},
			req: StatusRequest{Model: "m", EmbedModel: "e"}, kind: "off_loopback", says: "--allow-remote", chat: "flag --model", embed: "flag --embed-model"},
		{name: "a call's endpoint off loopback", req: StatusRequest{Tool: true, Args: map[string]string{"base_url": offLoopback}, Model: "m", EmbedModel: "e", ArgName: backticked},
			kind: "off_loopback", says: "`allow_remote`", chat: "argument model", embed: "argument embed_model"},
		{name: "no model named", flags: map[string]string{"base-url": offLoopback}, kind: "off_loopback"},
		{name: "an operator's setting that does not resolve", flags: map[string]string{"host-price-in": "abc"}, wantErr: "other"},
		{name: "a workspace that cannot be read", broken: true, wantErr: "workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayer(t, map[string]string{}, tc.flags, false)
			if tc.broken {
				breakWorkspace(t, l)
			}
			rep, err := l.Status(context.Background(), tc.req)
			if queryFailedAsWanted(t, err, tc.wantErr) {
				return
			}
			assert.False(t, rep.Up)
			require.NotNil(t, rep.Error)
			assert.Equal(t, tc.kind, rep.Error.Kind)
			assert.Contains(t, rep.Error.Message, tc.says)
			if tc.chat == "" {
				assert.Nil(t, rep.ChatModel)
			} else {
				require.NotNil(t, rep.ChatModel)
				assert.Equal(t, tc.chat, rep.ChatModel.Source)
			}
			if tc.embed != "" {
				require.NotNil(t, rep.EmbedModel)
				assert.Equal(t, tc.embed, rep.EmbedModel.Source)
			}
		})
	}
}

func TestLedger(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  map[string]string
		req    LedgerRequest
		broken bool
		// wantErr: "workspace" for a *WorkspaceError, "other" for any other error; by is what
		// the report sums by where there is none.
		wantErr, by string
	}{
		{name: "by mode unless asked", by: "mode"},
		{name: "by week", req: LedgerRequest{By: "week"}, by: "week"},
		{name: "by what no ledger sums by", req: LedgerRequest{By: "colour"}, wantErr: "other"},
		{name: "an operator's price that does not resolve", flags: map[string]string{"host-price-in": "abc"}, wantErr: "other"},
		{name: "a workspace that cannot be read", broken: true, wantErr: "workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLayer(t, map[string]string{}, tc.flags, false)
			if tc.broken {
				breakWorkspace(t, l)
			}
			res, err := l.Ledger(tc.req)
			if queryFailedAsWanted(t, err, tc.wantErr) {
				return
			}
			assert.Equal(t, tc.by, res.Report.By)
			assert.Zero(t, res.Report.Total.Runs)
			dir, err := engine.RunsDir(l.Root())
			require.NoError(t, err)
			assert.Equal(t, dir, res.Dir)
			assert.NoError(t, res.NoDirect, "no A/B record: nothing to measure, and nothing wrong")
			assert.Nil(t, res.Report.Direct)
		})
	}
}

func TestRunJournal(t *testing.T) {
	l := newLayer(t, map[string]string{}, nil, false)
	j := &probeJob{task: "t", got: &engine.Place{}}
	p, err := l.Prepare(context.Background(), j.Mode(), Call{Model: "m"})
	require.NoError(t, err)
	res, err := p.Run(context.Background(), j)
	require.NoError(t, err)
	require.NotEmpty(t, res.RunID)
	for _, tc := range []struct {
		name, id string
		found    bool
	}{
		{"its run id", res.RunID, true},
		{"a unique prefix", res.RunID[:10], true},
		{"no run", "19990101T000000Z-000000", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.RunJournal(tc.id)
			if !tc.found {
				require.Error(t, err)
				var none *JournalsError
				assert.NotErrorAs(t, err, &none, "the journals are there; the run is not")
				return
			}
			require.NoError(t, err)
			assert.True(t, got.Sealed, "sealed with the operator's key, as every run the layer starts")
			assert.NotEmpty(t, got.Events)
			assert.Contains(t, filepath.Base(got.Path), res.RunID)
		})
	}
}

// Outside a repository, with no home to keep journals in, the queries that read them say they
// found none.
func TestQueriesWithNoJournals(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	if _, err := engine.RunsDir(root); err == nil {
		t.Skip("the temporary directory is inside a repository")
	}
	v, err := schema.New()
	require.NoError(t, err)
	l, err := New(Operator{Dir: root}, v)
	require.NoError(t, err)
	for name, query := range map[string]func() error{
		"ledger":      func() error { _, err := l.Ledger(LedgerRequest{}); return err },
		"run journal": func() error { _, err := l.RunJournal("r"); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := query()
			var none *JournalsError
			require.ErrorAs(t, err, &none)
			assert.Equal(t, none.Err.Error(), err.Error(), "it reads as the error it wraps")
		})
	}
}

// queryFailedAsWanted checks a query's error against want: "workspace" for a *WorkspaceError that
// reads as the error it wraps, "other" for any other error, "" for none. It reports whether the
// query failed, so the case has nothing more to check.
func queryFailedAsWanted(t *testing.T, err error, want string) bool {
	t.Helper()
	var unread *WorkspaceError
	switch want {
	case "workspace":
		require.ErrorAs(t, err, &unread)
		assert.Equal(t, unread.Err.Error(), err.Error(), "it reads as the error it wraps")
		return true
	case "other":
		require.Error(t, err)
		assert.NotErrorAs(t, err, &unread)
		return true
	}
	require.NoError(t, err)
	return false
}
