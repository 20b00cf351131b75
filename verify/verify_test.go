package verify

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
)

func TestWorst(t *testing.T) {
	cases := []struct {
		verdicts []Verdict
		want     int
	}{
		{[]Verdict{Green, Green}, 0},
		{[]Verdict{Green, Red}, 1},
		{[]Verdict{Red, CouldNot, Green}, 2},
		{[]Verdict{CouldNot}, 2},
	}
	for _, tc := range cases {
		var outs []Outcome
		for _, v := range tc.verdicts {
			outs = append(outs, Outcome{Verdict: v})
		}
		assert.Equal(t, tc.want, Worst(outs), "%v", tc.verdicts)
	}
}

func TestRunClassifiesExits(t *testing.T) {
	recipes := []packs.Recipe{
		{Name: "w:green", Run: "true"},
		{Name: "w:red", Run: "echo no; exit 1"},
		{Name: "w:three", Run: "exit 3"},
		{Name: "w:two", Run: "exit 2"},
		{Name: "w:126", Run: "exit 126"},
		{Name: "w:127", Run: "exit 127"},
		{Name: "w:needs", Run: "true", Requires: []string{"no-such-tool-locum"}},
	}
	var out bytes.Buffer
	outs, err := Run(context.Background(), t.TempDir(), recipes, &out)
	require.NoError(t, err)
	want := []Verdict{Green, Red, Red, CouldNot, CouldNot, CouldNot, CouldNot}
	for i, o := range outs {
		assert.Equal(t, want[i], o.Verdict, o.Name)
	}
	assert.Contains(t, out.String(), "FAIL w:red (")
	assert.Contains(t, out.String(), "    no\n")
}

func TestRunNothing(t *testing.T) {
	_, err := Run(context.Background(), t.TempDir(), nil, &bytes.Buffer{})
	var nothing *NothingToRunError
	require.True(t, errors.As(err, &nothing))
	_, err = Select(&packs.Composition{}, nil)
	require.True(t, errors.As(err, &nothing))
}

func TestRunChecksReportsEachAndFolds(t *testing.T) {
	checks := []Check{
		{Name: "a/pass", Run: func(context.Context, *Env) error { return nil }},
		{Name: "a/fail", Run: func(context.Context, *Env) error { return errors.New("rail broke") }},
		{Name: "a/panic", Run: func(context.Context, *Env) error { panic("boom") }},
	}
	var out bytes.Buffer
	rep, err := RunChecks(context.Background(), DefaultRails(), checks, &out)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.ExitCode())
	assert.Contains(t, out.String(), "ok a/pass (")
	assert.Contains(t, out.String(), "FAIL a/fail (")
	assert.Contains(t, out.String(), ": rail broke\n")
	assert.Contains(t, out.String(), "FAIL a/panic (")
	assert.Contains(t, out.String(), "verify-offline: 3 checks, 2 failed\n")

	rep, err = RunChecks(context.Background(), DefaultRails(), []Check{{Name: "x", Run: func(context.Context, *Env) error {
		return &CouldNotRunError{Err: errors.New("no temp dir")}
	}}}, &out)
	require.NoError(t, err)
	assert.Equal(t, 2, rep.ExitCode())
	assert.Contains(t, out.String(), "ERROR x (")
	assert.Contains(t, out.String(), "): could not run: no temp dir\n")
}

func TestOfflinePassesHere(t *testing.T) {
	var out bytes.Buffer
	rep, err := Offline(context.Background(), &out)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.ExitCode(), out.String())
}

// A deliberately broken rail fails --verify-offline with the name of the check that guards it.
func TestBrokenLoopbackRailFailsByName(t *testing.T) {
	broken := Rails{
		ParseEndpoint:    func(raw string, _ bool) (*url.URL, error) { return url.Parse(raw) },
		CheckDialAddress: func(string) error { return nil },
	}
	var out bytes.Buffer
	rep, err := RunChecks(context.Background(), broken, OfflineChecks(), &out)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.ExitCode())
	assert.Contains(t, out.String(), "FAIL loopback/off-loopback-spellings-refused (")
	assert.Contains(t, out.String(), "http://127.0.0.1@example.com/v1 was not refused")
	assert.Contains(t, out.String(), "FAIL loopback/dial-time-check-on-the-resolved-address (")
	assert.Contains(t, out.String(), "ok rollback/verify-exit-1-restores (", "the other rails still pass")
}

func TestACheckThatConnectsFails(t *testing.T) {
	var out bytes.Buffer
	rep, err := RunChecks(context.Background(), DefaultRails(), []Check{{Name: "net/sneaky", Run: func(ctx context.Context, env *Env) error {
		_, _ = env.Dial(ctx, "tcp", "127.0.0.1:1")
		return nil
	}}}, &out)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.ExitCode())
	assert.Contains(t, out.String(), "FAIL net/sneaky (")
	assert.Contains(t, out.String(), "it tried to open 1 network connections; these checks run with zero network")
}

func TestEveryCheckHasAUniqueName(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range OfflineChecks() {
		assert.False(t, seen[c.Name], c.Name)
		seen[c.Name] = true
	}
	for _, group := range []string{"loopback/", "budget/", "thinking/", "rollback/", "dedup/", "manifests/"} {
		found := false
		for name := range seen {
			found = found || strings.HasPrefix(name, group)
		}
		assert.True(t, found, group)
	}
}
