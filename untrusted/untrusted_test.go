package untrusted

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "a.txt")
	require.NoError(t, os.WriteFile(regular, []byte("hello"), 0o644))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	for _, tc := range []struct {
		name  string
		path  string
		limit int64
		want  string // "" for success, else a part of the error
	}{
		{"regular", regular, 5, ""},
		{"over the limit", regular, 4, "5 bytes, over the 4 bytes"},
		{"directory", dir, 100, "not a regular file (a directory)"},
		{"fifo does not block", fifo, 100, "not a regular file (a FIFO)"},
		{"device", "/dev/zero", 100, "not a regular file (a character device)"},
		{"missing", filepath.Join(dir, "nope"), 100, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := ReadFile(tc.path, tc.limit)
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, "hello", string(data))
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestReadAll(t *testing.T) {
	_, err := ReadAll(strings.NewReader(strings.Repeat("x", 11)), "stdin", 10)
	assert.EqualError(t, err, "stdin is over 10 bytes, the most locum reads of it")
	data, err := ReadAll(strings.NewReader("0123456789"), "stdin", 10)
	require.NoError(t, err)
	assert.Len(t, data, 10)
}

func TestReadFileIn(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("s"), 0o600))
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub", "in.json"), []byte("{}"), 0o644))
	require.NoError(t, os.Symlink(secret, filepath.Join(root, "link")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "dirlink")))
	require.NoError(t, os.Symlink("sub/in.json", filepath.Join(root, "inner")))

	data, err := ReadFileIn(root, "sub/in.json", 10)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(data))
	_, err = ReadFileIn(root, "inner", 10)
	require.NoError(t, err, "a link that stays inside is fine")

	for _, rel := range []string{"link", "dirlink/secret", "../" + filepath.Base(outside) + "/secret", secret} {
		_, err := ReadFileIn(root, rel, 10)
		var ce *ConfineError
		require.ErrorAs(t, err, &ce, rel)
		assert.Contains(t, err.Error(), "leads out of")
	}
}

func TestConfineMissing(t *testing.T) {
	root := t.TempDir()
	got, err := Confine(root, "a/b/c")
	require.NoError(t, err)
	real, _ := filepath.EvalSymlinks(root)
	assert.Equal(t, filepath.Join(real, "a/b/c"), got)
}

func TestCheckKeys(t *testing.T) {
	for _, tc := range []struct {
		doc, want, at string
	}{
		{`{"a":1,"b":{"c":[1,{"d":2}]}}`, "", ""},
		{`{"a":1,"a":2}`, `duplicate key "a"`, "/a"},
		{`{"roles":{},"x":1,"roles":{"code":{}}}`, `duplicate key "roles"`, "/roles"},
		{`{"roles":{},"Roles":{}}`, `keys "roles" and "Roles" differ only in letter case`, "/Roles"},
		// encoding/json folds the long s and the Kelvin sign onto s and k: one field, two keys.
		{`{"size":1,"ſize":2}`, `differ only in letter case`, "/ſize"},
		{`{"key":1,"Key":2}`, `differ only in letter case`, "/Key"},
		{`{"a":[{"k":1},{"k":1,"k":2}]}`, `duplicate key "k"`, "/a/1/k"},
		{`{"a/b":{"x":1,"x":1}}`, `duplicate key "x"`, "/a~1b/x"},
		{`[1,2,3]`, "", ""},
	} {
		err := CheckKeys([]byte(tc.doc))
		if tc.want == "" {
			assert.NoError(t, err, tc.doc)
			continue
		}
		var de *DuplicateKeyError
		require.ErrorAs(t, err, &de, tc.doc)
		assert.Contains(t, err.Error(), tc.want)
		assert.Equal(t, tc.at, de.At())
	}
	assert.Error(t, CheckKeys([]byte(`{"a":`)))
	assert.Error(t, CheckKeys([]byte(`{} {}`)))
}

// A document nested past MaxDepth is refused where the limit is passed, at level 65 whatever
// follows. Without the limit, a pointer string built for every level and every value makes a
// 120 KB argument of nested arrays take 32 s and 3.7 GB.
func TestCheckKeysRefusesDeepNesting(t *testing.T) {
	nest := func(n int, open, close string) []byte {
		return []byte(strings.Repeat(open, n) + strings.Repeat(close, n))
	}
	require.NoError(t, CheckKeys(nest(MaxDepth, "[", "]")))
	for _, doc := range [][]byte{
		nest(MaxDepth+1, "[", "]"),
		[]byte(strings.Repeat(`{"k":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)),
		nest(60000, "[", "]"), // the 120 KB argument
	} {
		err := CheckKeys(doc)
		var de *DepthError
		require.ErrorAs(t, err, &de)
		assert.Contains(t, err.Error(), "deeper than 64 levels")
	}
	err := CheckKeys([]byte(strings.Repeat(`{"k":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)))
	var de *DepthError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, strings.Repeat("/k", MaxDepth), de.Pointer)
}

// The walk's cost is linear in the document: a 120 KB argument of nested arrays, refused.
func BenchmarkCheckKeysDeep(b *testing.B) {
	doc := []byte(strings.Repeat("[", 60000) + strings.Repeat("]", 60000))
	for b.Loop() {
		_ = CheckKeys(doc)
	}
}

func TestUnmarshalRefusesWhatTwoDecodersWouldReadApart(t *testing.T) {
	var v struct {
		Roles map[string]string `json:"roles"`
	}
	require.Error(t, Unmarshal([]byte(`{"Roles":{"a":"evil"},"roles":{"a":"good"}}`), &v))
	require.NoError(t, Unmarshal([]byte(`{"roles":{"a":"good"}}`), &v))
	assert.Equal(t, "good", v.Roles["a"])
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, with \\ kept":                     "plain text, with \\ kept",
		"two\nlines":                                   `two\nlines`,
		"L3-3 ok\nunsupported: 0":                      `L3-3 ok\nunsupported: 0`,
		"\x1b]0;title\x07\x1b[31mred":                  `\x1b]0;title\x07\x1b[31mred`,
		"tab\tcr\rdel\x7f":                             `tab\tcr\rdel\x7f`,
		"c1 \u009b csi":                                `c1 \u009b csi`,
		"bidi \u202e reversed \u2066":                  `bidi \u202e reversed \u2066`,
		"sep \u2028 para \u2029 alm \u061c ann \ufff9": `sep \u2028 para \u2029 alm \u061c ann \ufff9`,
		"bad \xff utf8":                                `bad \xff utf8`,
		"unicode é ok, 漢字 ok":                          "unicode é ok, 漢字 ok",
	} {
		assert.Equal(t, want, Escape(in), in)
	}
	assert.Equal(t, "a\\x1b\nb", EscapeLines("a\x1b\nb"))
	assert.Equal(t, "FAIL\tpkg\t0.002s\nliteral \\t kept", EscapeLines("FAIL\tpkg\t0.002s\nliteral \\t kept"))
}

func FuzzCheckKeys(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1,"a":2}`, `{"a":{"B":1,"b":2}}`, `[{"x":[{}]}]`, `"s"`, `{`,
		strings.Repeat("[", 70) + strings.Repeat("]", 70), strings.Repeat(`{"a":[`, 40) + strings.Repeat("]}", 40),
		`{"size":1,"ſize":2}`, `{"key":1,"\u212aey":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := CheckKeys(data)
		if err == nil {
			// CheckKeys reads numbers as text (a document may hold 1E700); so does this decoder.
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var v any
			if e := dec.Decode(&v); e != nil {
				t.Fatalf("CheckKeys accepted what the decoder refused: %v", e)
			}
		}
	})
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"a\nb", "\x1b[2J", "\xff\xfe", "\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		for _, r := range out {
			if r < 0x20 || r == 0x7f || hidden(r) {
				t.Fatalf("Escape(%q) left %U", s, r)
			}
		}
	})
}

func TestInside(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"a/b", true}, {".", true}, {"/r/a", true}, {"/r", true}, {"a/../b", true},
		{"..", false}, {"../x", false}, {"/r/../x", false}, {"/rx", false}, {"/etc", false},
	} {
		assert.Equal(t, tc.want, Inside("/r", tc.path), tc.path)
	}
}
