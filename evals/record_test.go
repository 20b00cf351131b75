package evals

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locumdev/locum/packs"
)

func TestRoutingRule(t *testing.T) {
	roles := map[string]packs.Role{
		"code":  {Tasks: []string{"code"}, Effort: "low"},
		"prose": {Tasks: []string{"codify", "handoff"}, Effort: "low"},
	}
	type cells struct{ lp, hp, hc int } // local passed, host passed, host completed
	cases := []struct {
		name                string
		code, codify, hand  cells
		wantCode, wantProse bool
	}{
		{"positive tie 5/5 qualifies", cells{5, 5, 5}, cells{5, 5, 5}, cells{5, 5, 5}, true, true},
		{"local beats host", cells{5, 2, 5}, cells{5, 0, 5}, cells{5, 4, 5}, true, true},
		{"0/5 tie does not qualify", cells{0, 0, 5}, cells{5, 5, 5}, cells{5, 5, 5}, false, true},
		{"one local failure", cells{4, 0, 5}, cells{5, 5, 5}, cells{5, 5, 5}, false, true},
		{"a host turn did not complete", cells{5, 4, 4}, cells{5, 5, 5}, cells{5, 5, 5}, false, true},
		{"one prose task fails the role", cells{5, 5, 5}, cells{0, 3, 5}, cells{5, 5, 5}, true, false},
		{"the recorded outcome: code L5/H5, codify L0/H3, handoff L5/H5", cells{5, 5, 5}, cells{0, 3, 5}, cells{5, 5, 5}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &Record{K: 5, Fingerprints: currentFingerprints(), Local: LocalArm{Models: map[string]string{"code": "m", "prose": "m"}, Effort: "low"}, Cells: map[string]map[string]Cell{
				"code":    {ArmLocal: {Passed: tc.code.lp, Completed: 5}, ArmHost: {Passed: tc.code.hp, Completed: tc.code.hc}},
				"codify":  {ArmLocal: {Passed: tc.codify.lp, Completed: 5}, ArmHost: {Passed: tc.codify.hp, Completed: tc.codify.hc}},
				"handoff": {ArmLocal: {Passed: tc.hand.lp, Completed: 5}, ArmHost: {Passed: tc.hand.hp, Completed: tc.hand.hc}},
			}}
			got := DeriveRoles(rec, roles)
			assert.Equal(t, tc.wantCode, got["code"].Enabled, got["code"].Reason)
			assert.Equal(t, tc.wantProse, got["prose"].Enabled, got["prose"].Reason)
			if !tc.wantProse {
				assert.Contains(t, got["prose"].Reason, "codify L0/H3")
			}
		})
	}
}

func currentFingerprints() map[string]string {
	fps := map[string]string{}
	for _, task := range Tasks() {
		fps[task.ID] = task.Fingerprint()
	}
	return fps
}

// A record earns at k = 5: fewer turns, however clean, and a task measured under a prompt that
// has changed since, earn nothing.
func TestRoutingNeedsKFiveAndTheShippedPrompts(t *testing.T) {
	roles := map[string]packs.Role{"code": {Tasks: []string{"code"}}, "prose": {Tasks: []string{"codify", "handoff"}}}
	all := func(k int) map[string]map[string]Cell {
		c := Cell{Completed: k, Passed: k}
		return map[string]map[string]Cell{"code": {ArmLocal: c, ArmHost: c}, "codify": {ArmLocal: c, ArmHost: c}, "handoff": {ArmLocal: c, ArmHost: c}}
	}
	models := LocalArm{Models: map[string]string{"code": "m", "prose": "m"}, Effort: "low"}
	for _, k := range []int{1, 4} {
		got := DeriveRoles(&Record{K: k, Local: models, Fingerprints: currentFingerprints(), Cells: all(k)}, roles)
		for _, role := range []string{"code", "prose"} {
			assert.False(t, got[role].Enabled)
			assert.Equal(t, fmt.Sprintf("k=%d: a record earns routing at k=5", k), got[role].Reason)
		}
		ok, why := Qualifies(Cell{Completed: k, Passed: k}, Cell{Completed: k, Passed: k}, k)
		assert.False(t, ok)
		assert.Contains(t, why, "a record earns routing at k=5")
	}
	for _, k := range []int{5, 10} {
		got := DeriveRoles(&Record{K: k, Local: models, Fingerprints: currentFingerprints(), Cells: all(k)}, roles)
		assert.True(t, got["code"].Enabled, got["code"].Reason)
	}
	fps := currentFingerprints()
	fps["handoff"] = strings.Repeat("0", 64)
	got := DeriveRoles(&Record{K: 5, Local: models, Fingerprints: fps, Cells: all(5)}, roles)
	assert.True(t, got["code"].Enabled, got["code"].Reason)
	assert.False(t, got["prose"].Enabled)
	assert.Contains(t, got["prose"].Reason, "task handoff changed since capture")
}

func TestTurnSeedIsStableAndDistinct(t *testing.T) {
	assert.Equal(t, TurnSeed(42, "code", 1), TurnSeed(42, "code", 1))
	assert.NotEqual(t, TurnSeed(42, "code", 1), TurnSeed(42, "code", 2))
	assert.NotEqual(t, TurnSeed(42, "code", 1), TurnSeed(43, "code", 1))
	assert.GreaterOrEqual(t, TurnSeed(42, "code", 1), int64(0))
}

// The register counts every turn of a cell in exactly one of four outcomes, which sum to k, and
// names the seed, the models, the locum version and the date.
func TestRegisterCountsFourOutcomesSummingToK(t *testing.T) {
	turn := func(arm, task string, run int, completed, passed bool, output, errText string) Turn {
		return Turn{Arm: arm, Task: task, Run: run, Completed: completed, Passed: passed, Output: output, Error: errText}
	}
	rec := &Record{Name: "r", Created: "2026-11-30T21:00:00Z", K: 5, Seed: 42, Fingerprints: currentFingerprints(),
		Local: LocalArm{Models: map[string]string{"code": "m1", "prose": "m2", "agent": "m3"}, Effort: "low", Endpoint: "http://127.0.0.1:1234/v1",
			Digests: map[string]string{"m1": "sha256:5c7ac4aead1b", "m3": "m3.gguf, Q4_K - Medium, 7 parameters, 9 bytes"}},
		Host: HostArm{Command: "host -p", Version: "1.0", Model: "h"}, Locum: LocumBuild{Version: "v9.9.9"},
		Turns: []Turn{
			turn(ArmLocal, "code", 1, true, true, "x", ""),
			turn(ArmLocal, "code", 2, true, false, "x", ""),
			turn(ArmLocal, "code", 3, true, false, "", "the reply was truncated"),
			turn(ArmLocal, "code", 4, true, true, "x", ""),
			turn(ArmLocal, "code", 5, true, true, "x", ""),
			turn(ArmHost, "code", 1, false, false, "", "exit 1"),
			turn(ArmHost, "code", 2, true, false, " \n", ""),
			turn(ArmHost, "code", 3, true, false, "wrong", ""),
			turn(ArmHost, "code", 4, true, true, "x", ""),
			turn(ArmHost, "code", 5, true, true, "x", ""),
		}}
	rec.Cells = FoldCells(rec.Turns)
	page := string(RenderRegister(rec, map[string]packs.Role{"code": {Tasks: []string{"code"}}}))
	for _, want := range []string{
		"| task | arm | compliant | non-compliant | did not complete | could not attribute | k |\n",
		"| code | L | 3 | 1 | 0 | 1 | 5 |\n",
		"| code | H | 2 | 1 | 1 | 1 | 5 |\n",
		"| codify | L | 0 | 0 | 0 | 0 | 5 |\n",
		"- Date: 2026-11-30T21:00:00Z. Captured by locum v9.9.9",
		"- Seed 42; k = 5 turns per task and arm.\n",
		"  - role code: m1, digest `sha256:5c7ac4aead1b`.\n",
		"  - role agent: m3, weights `m3.gguf, Q4_K - Medium, 7 parameters, 9 bytes` as the server describes them.\n",
		"  - role prose: m2, digest not reported by the server.\n",
		"model h as declared",
	} {
		assert.Contains(t, page, want)
	}
}
