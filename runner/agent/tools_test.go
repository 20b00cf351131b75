package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testWorkspace(t *testing.T, files map[string]string) *workspace {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	real, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	return newWorkspace(real, func(context.Context) (string, error) { return "verify: exit 0", nil })
}

func call(t *testing.T, w *workspace, name, arguments string) (string, bool, error) {
	t.Helper()
	a, err := ParseArgs(name, arguments)
	if err != nil {
		return "", false, err
	}
	return w.run(context.Background(), name, a)
}

func rule(err error) string {
	if be, ok := err.(*BlockError); ok {
		return be.Rule
	}
	return ""
}

func TestEditIsContentAnchoredAndAllOrNothing(t *testing.T) {
	w := testWorkspace(t, map[string]string{"a.go": "x := 1\ny := 1\nz := 2\n"})
	_, _, err := call(t, w, "edit_file", `{"path":"a.go","search":"z := 2","replace":"z := 3"}`)
	assert.Equal(t, "read_first", rule(err))
	_, _, err = call(t, w, "read_file", `{"path":"a.go"}`)
	require.NoError(t, err)
	cases := []struct {
		args, want string
		changed    bool
		errText    string
	}{
		{`{"path":"a.go","search":":= 1","replace":":= 9"}`, "", false, "occurs 2 times in a.go; nothing was changed"},
		{`{"path":"a.go","search":"w := 0","replace":"w := 1"}`, "", false, "occurs nowhere in a.go; nothing was changed"},
		{`{"path":"a.go","search":"z := 2","replace":"z := 3"}`, "edited a.go at line 3:\n-z := 2\n+z := 3\n", true, ""},
	}
	for _, tc := range cases {
		out, changed, err := call(t, w, "edit_file", tc.args)
		if tc.errText != "" {
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.errText)
		} else {
			require.NoError(t, err)
			assert.Equal(t, tc.want, out)
		}
		assert.Equal(t, tc.changed, changed)
	}
	data, err := os.ReadFile(filepath.Join(w.root, "a.go"))
	require.NoError(t, err)
	assert.Equal(t, "x := 1\ny := 1\nz := 3\n", string(data))
}

func TestWriteCapsPerFileAndPerRun(t *testing.T) {
	w := testWorkspace(t, nil)
	w.fileCap, w.totalCap = 10, 15
	_, _, err := call(t, w, "write_file", `{"path":"a.txt","content":"0123456789A"}`)
	assert.Equal(t, "size", rule(err))
	_, changed, err := call(t, w, "write_file", `{"path":"a.txt","content":"0123456789"}`)
	require.NoError(t, err)
	assert.True(t, changed)
	_, _, err = call(t, w, "write_file", `{"path":"sub/b.txt","content":"012345"}`)
	assert.Equal(t, "total_size", rule(err))
	assert.NoFileExists(t, filepath.Join(w.root, "sub/b.txt"))
}

// A run creates at most so many files; replacing one it made is no new file.
func TestCreatedFilesAreCapped(t *testing.T) {
	w := testWorkspace(t, nil)
	w.createdCap = 2
	for _, p := range []string{"a.txt", "b.txt"} {
		_, changed, err := call(t, w, "write_file", `{"path":"`+p+`","content":"x"}`)
		require.NoError(t, err)
		assert.True(t, changed)
	}
	_, _, err := call(t, w, "write_file", `{"path":"a.txt","content":"y"}`)
	require.NoError(t, err, "a file the run made is replaced, not created")
	_, _, err = call(t, w, "write_file", `{"path":"c.txt","content":""}`)
	assert.Equal(t, "created", rule(err))
	assert.NoFileExists(t, filepath.Join(w.root, "c.txt"))
}

func TestPathsStayInside(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	// A git directory under other names: the one the .git file names, one with a HEAD and
	// objects, and one a HEAD would complete.
	w := testWorkspace(t, map[string]string{"a.go": "a\n", ".git": "gitdir: .realgit\n",
		".realgit/HEAD": "ref: refs/heads/main\n", ".realgit/config": "x", ".realgit/objects/.keep": "",
		"bare/HEAD": "ref: refs/heads/main\n", "bare/objects/.keep": "", "half/objects/.keep": ""})
	require.NoError(t, os.Symlink(outside, filepath.Join(w.root, "out")))
	require.NoError(t, os.Symlink(".realgit", filepath.Join(w.root, "gitlink")))
	require.NoError(t, os.Symlink("a.go", filepath.Join(w.root, "in.go")))
	cases := []struct {
		name, args, rule string
	}{
		{"read_file", `{"path":"../x"}`, "outside"},
		{"read_file", `{"path":"out/secret"}`, "outside"},
		{"write_file", `{"path":"out/new","content":"x"}`, "outside"},
		{"write_file", `{"path":"/tmp/x","content":"x"}`, "outside"},
		{"list_dir", `{"path":"out"}`, "outside"},
		{"grep", `{"pattern":"s","path":"out"}`, "outside"},
		{"write_file", `{"path":".git/hooks/pre-commit","content":"x"}`, "dot_git"},
		{"write_file", `{"path":"sub/.GIT/config","content":"x"}`, "dot_git"},
		{"write_file", `{"path":".git","content":"gitdir: elsewhere"}`, "dot_git"},
		{"write_file", `{"path":"./sub/../.git/config","content":"x"}`, "dot_git"},
		{"write_file", `{"path":".git. /config","content":"x"}`, "dot_git"},
		{"write_file", `{"path":"GIT~1/config","content":"x"}`, "dot_git"},
		{"write_file", `{"path":".g\u200cit/config","content":"x"}`, "dot_git"},
		{"write_file", `{"path":".realgit/config","content":"x"}`, "dot_git"},
		{"edit_file", `{"path":"gitlink/config","search":"x","replace":"y"}`, "dot_git"},
		{"write_file", `{"path":"bare/hooks/post-checkout","content":"x"}`, "dot_git"},
		{"write_file", `{"path":"half/HEAD","content":"ref: refs/heads/main"}`, "dot_git"},
		{"read_file", `{"path":"a.go\u0000"}`, "outside"},
	}
	for _, tc := range cases {
		t.Run(tc.args, func(t *testing.T) {
			_, _, err := call(t, w, tc.name, tc.args)
			assert.Equal(t, tc.rule, rule(err), "%v", err)
		})
	}
	assert.NoFileExists(t, filepath.Join(outside, "new"))
	// A link that stays inside reads its target.
	out, _, err := call(t, w, "read_file", `{"path":"in.go"}`)
	require.NoError(t, err)
	assert.Contains(t, out, "1\ta")
}

func TestReadFileRangesAndCut(t *testing.T) {
	w := testWorkspace(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	out, _, err := call(t, w, "read_file", `{"path":"a.txt","start_line":2,"end_line":2}`)
	require.NoError(t, err)
	assert.Equal(t, "a.txt, lines 2-2 of 3:\n2\ttwo\n", out)
	_, _, err = call(t, w, "read_file", `{"path":"a.txt","start_line":9}`)
	assert.ErrorContains(t, err, "past its end")
}

func TestParseArgsRefusesWhatTheToolDoesNotTake(t *testing.T) {
	cases := []struct{ name, args, want string }{
		{"shell", `{}`, `there is no tool "shell"`},
		{"read_file", `{"path": 1}`, `argument "path" of read_file must be a string`},
		{"read_file", `{"path":"a","path":"b"}`, "not a JSON object"},
		{"read_file", `{"path":"a","mode":"x"}`, `read_file takes no argument "mode"`},
		{"read_file", `[1]`, "not a JSON object"},
		{"edit_file", `{"path":"a","search":"x"}`, `edit_file needs the argument "replace"`},
		{"read_file", `{"path":"a","start_line":"2"}`, "must be a whole number"},
	}
	for _, tc := range cases {
		_, err := ParseArgs(tc.name, tc.args)
		var me *MalformedError
		require.ErrorAs(t, err, &me, tc.args)
		assert.Contains(t, me.Reason, tc.want)
	}
	a, err := ParseArgs("run_verify", "")
	require.NoError(t, err)
	assert.Empty(t, a)
}

func TestGrepAndListDir(t *testing.T) {
	w := testWorkspace(t, map[string]string{"a.go": "func Add()\nfunc Sub()\n", "sub/b.go": "func AddMore()\n", "bin.dat": "Add\x00"})
	out, _, err := call(t, w, "grep", `{"pattern":"func Add"}`)
	require.NoError(t, err)
	assert.Equal(t, "a.go:1: func Add()\nsub/b.go:1: func AddMore()\n", out)
	out, _, err = call(t, w, "grep", `{"pattern":"Nothing"}`)
	require.NoError(t, err)
	assert.Equal(t, "no match\n", out)
	_, _, err = call(t, w, "grep", `{"pattern":"("}`)
	assert.ErrorContains(t, err, "not a valid RE2 regular expression")
	out, _, err = call(t, w, "list_dir", `{"path":""}`)
	require.NoError(t, err)
	assert.Equal(t, "a.go\nbin.dat\nsub/\n", out)
}

func TestGrepStopsAtItsBound(t *testing.T) {
	w := testWorkspace(t, map[string]string{"a.go": "x\n", "b.go": "x\n", "c.go": "x\n"})
	w.grepFiles = 2
	out, _, err := call(t, w, "grep", `{"pattern":"x"}`)
	require.NoError(t, err)
	assert.Equal(t, "a.go:1: x\nb.go:1: x\n[stopped after 2 of 3 files: narrow the path]\n", out)
}
