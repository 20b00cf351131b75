// Package runtest holds the helpers the tests of the runner packages share: the client's, the
// engine's and the modes' tests each live in their own package, and these would otherwise be
// written once in each. Nothing outside tests imports it.
package runtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/scripted"
)

var standInMu sync.Mutex

// StandIn registers mode, where the test binary links no mode of that name, as a stand-in that
// takes every setting a mode may take: the tests of the packages below the modes run a mode's
// settings without its package.
func StandIn(mode string) {
	standInMu.Lock()
	defer standInMu.Unlock()
	if !packs.Registered(mode) {
		packs.RegisterMode(packs.ModeSpec{Name: mode, Settings: packs.PerModeSettings()})
	}
}

// Model is a chat model the scripted server's LM Studio lists: a run asking one it does not
// list is refused before any request.
const Model = "qwen3-coder-30b"

// Settings is the built-in pack's settings for mode, with flags given as on the command line; a
// mode the test binary does not link is a stand-in (StandIn).
func Settings(t testing.TB, mode string, flags map[string]string) *packs.Settings {
	t.Helper()
	StandIn(mode)
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	c := &packs.Composition{Packs: []*packs.Pack{p}}
	s, err := c.Resolve(mode, nil, flags)
	require.NoError(t, err)
	return s
}

// SettingsFor is the built-in pack's transform settings with the scripted server as the endpoint.
func SettingsFor(t testing.TB, baseURL string) *packs.Settings {
	t.Helper()
	return Settings(t, "transform", map[string]string{"base-url": baseURL})
}

// JSON is a reply with a JSON body.
func JSON(v string) scripted.Reply { return scripted.Reply{JSON: json.RawMessage(v)} }

// Answer is a whole chat reply carrying content, with a small usage.
func Answer(content string) scripted.Reply {
	b, _ := json.Marshal(content)
	return JSON(`{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":` + string(b) + `}}],"usage":{"prompt_tokens":12,"completion_tokens":3}}`)
}

// SentBody is the body of the last chat request the server received.
func SentBody(t *testing.T, s *scripted.Server) map[string]any {
	t.Helper()
	reqs := s.RequestsTo("/v1/chat/completions")
	require.NotEmpty(t, reqs)
	var body map[string]any
	require.NoError(t, json.Unmarshal(reqs[len(reqs)-1].Body, &body))
	return body
}

// Base64 encodes float32s as an embeddings reply with encoding_format base64 carries them.
func Base64(v ...float32) string {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(raw)
}
