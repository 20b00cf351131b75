package packs

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locumdev/locum/schema"
)

// ModeSpec is what packs knows of a registered mode.
type ModeSpec struct {
	Name string
	// Settings are the declared settings the mode takes beyond those every mode takes (the
	// endpoint, timeout, max_input_bytes).
	Settings []Key
	// Step says a workflow step may run the mode; EditsInPlace that such a step edits files, so
	// its workflow must have a verify.
	Step, EditsInPlace bool
	// StepInputs are the keys a step's `with` may give the mode.
	StepInputs []StepInput
}

var (
	registeredMu sync.RWMutex
	// registered are the modes the running locum knows, each as its package registered it.
	registered = map[string]ModeSpec{}
)

// RegisterMode makes a mode known: it takes m.Settings (declared settings, such as MaxAttempts)
// beyond those every mode takes, a pack may declare one outside the contract's own, and a
// workflow step may run one that says Step, with the inputs it declares. A setting every mode
// takes, step inputs that checkStepInputs refuses, or a second registration of a name, is a
// programming error.
func RegisterMode(m ModeSpec) {
	for _, k := range m.Settings {
		if s, ok := specOf(k.name); !ok || !s.perMode {
			panic(fmt.Sprintf("packs: mode %q lists %s, which is no setting a mode chooses to take", m.Name, k))
		}
	}
	if err := checkStepInputs(m); err != nil {
		panic("packs: " + err.Error())
	}
	registeredMu.Lock()
	defer registeredMu.Unlock()
	if _, dup := registered[m.Name]; dup {
		panic(fmt.Sprintf("packs: mode %q registered twice", m.Name))
	}
	m.Settings = slices.Clone(m.Settings)
	m.StepInputs = slices.Clone(m.StepInputs)
	registered[m.Name] = m
}

// KnownMode says a pack may declare mode: one of the contract's, or a registered one.
func KnownMode(mode string) bool {
	if slices.Contains(Modes, mode) {
		return true
	}
	_, ok := registeredMode(mode)
	return ok
}

func registeredMode(mode string) (ModeSpec, bool) {
	registeredMu.RLock()
	defer registeredMu.RUnlock()
	m, ok := registered[mode]
	return m, ok
}

// Registered says a mode of that name is registered.
func Registered(mode string) bool {
	_, ok := registeredMode(mode)
	return ok
}

// PerModeSettings are the settings a mode may choose to take (ModeSpec.Settings), in the table's
// order.
func PerModeSettings() []Key {
	var out []Key
	for _, s := range keySpecs {
		if s.perMode {
			out = append(out, s.key)
		}
	}
	return out
}

// registeredTakes says a registered mode takes key; false for a mode not registered.
func registeredTakes(mode string, key Key) bool {
	m, _ := registeredMode(mode)
	return slices.Contains(m.Settings, key)
}

type valueKind int

const (
	kindCount       valueKind = iota // a whole number, at least 1
	kindCountOrZero                  // a whole number, 0 allowed
	kindCosine                       // a plain decimal from -1 to 1
	kindDuration
	kindDurationOrZero // a duration where 0 means none
	kindText
	kindBool
	kindSlug
	kindEffort
	kindEditFormat
	kindEditGuard // span, signature or comments: each narrower than the one before
	kindDedupMethod
	kindAutoBool // auto, true or false
	kindSandbox  // auto, require or none
	kindPrice    // a plain decimal of at least 0: US dollars per million tokens
	kindRatio    // a plain decimal above 0
	kindHostFamily
	kindDelegateWhen // pays or always
	kindOnRedBaseline
)

// Key names one setting. The settings are this package's Key variables: a key that is not one
// cannot be written, so a misspelt key is a compile error rather than a value read as zero.
type Key struct{ name string }

// String is the setting's name, as packs, the workspace and the journal spell it.
func (k Key) String() string { return k.name }

// The settings.
var (
	BaseURL           = Key{"base_url"}
	AllowRemote       = Key{"allow_remote"}
	AllowUnlisted     = Key{"allow_unlisted_model"}
	Timeout           = Key{"timeout"}
	FirstTokenTimeout = Key{"first_token_timeout"}
	MaxInputBytes     = Key{"max_input_bytes"}
	MaxOutputTokens   = Key{"max_output_tokens"}
	Effort            = Key{"effort"}
	RoleSetting       = Key{"role"}
	MaxAttempts       = Key{"max_attempts"}
	EditFormat        = Key{"edit_format"}
	EditGuard         = Key{"edit_guard"}
	Mutants           = Key{"mutants"}
	VerifyTimeout     = Key{"verify_timeout"}
	ExpectRed         = Key{"expect_red"}
	NoBaseline        = Key{"no_baseline"}
	MaxTurns          = Key{"max_turns"}
	VerifyRounds      = Key{"verify_rounds"}
	StallTurns        = Key{"stall_turns"}
	MaxWords          = Key{"max_words"}
	EmbedModel        = Key{"embed_model"}
	Threshold         = Key{"threshold"}
	Method            = Key{"method"}
	Exact             = Key{"exact"}
	BatchSize         = Key{"batch_size"}
	Glob              = Key{"glob"}
	K                 = Key{"k"}
	VerifyNetwork     = Key{"verify_network"}
	SandboxSetting    = Key{"sandbox"}
	VerifyCaches      = Key{"verify_caches"}
	VerifyHome        = Key{"verify_home"}
	CacheMaxMiB       = Key{"cache_max_mib"}
	HostFamily        = Key{"host_family"}
	HostPriceIn       = Key{"host_price_in"}
	HostPriceOut      = Key{"host_price_out"}
	HostPriceCached   = Key{"host_price_cached"}
	HostBytesPerToken = Key{"host_bytes_per_token"}
	HostTurnsLeft     = Key{"host_turns_left"}
	HostContextTokens = Key{"host_context_tokens"}
	HostHoldsSpan     = Key{"host_holds_span"}
	HostTranscripts   = Key{"host_transcripts"}
	DelegateWhen      = Key{"delegate_when"}
	Jobs              = Key{"jobs"}
	Servers           = Key{"servers"}
	OnRedBaseline     = Key{"on_red_baseline"}
)

// The settings a kind of mode takes, for the modes' registrations to share.
var (
	// ChatSettings are taken by a mode that asks a chat model.
	ChatSettings = []Key{FirstTokenTimeout, MaxOutputTokens, Effort}
	// VerifySettings are taken by a mode that runs a verify command.
	VerifySettings = []Key{VerifyTimeout, VerifyNetwork, SandboxSetting, VerifyHome, VerifyCaches}
	// HostSettings are taken by a mode a host delegates to, for the host-cost estimate.
	HostSettings = []Key{HostTurnsLeft, HostContextTokens}
)

// LedgerSettings names the settings only `locum ledger` (and the MCP ledger tool) resolves: no
// mode of the contract, so no run resolves them.
const LedgerSettings = "ledger"

// Group is where a setting's flag stands in a command's help: among the command's own flags
// (GroupCommand), or under one of Groups, with the settings of its kind every mode shares.
type Group string

// The groups of settings.
const (
	// GroupCommand settings belong to the few modes that take them and stand among a command's
	// own flags, such as summarize's max_words.
	GroupCommand  Group = ""
	GroupModel    Group = "model request"
	GroupVerify   Group = "verify and sandbox"
	GroupEndpoint Group = "endpoint"
	GroupHost     Group = "host cost"
)

// Groups are the groups of settings in the order a command's help shows them, after its own flags.
var Groups = []Group{GroupModel, GroupVerify, GroupEndpoint, GroupHost}

// keySpec is one setting: its built-in default, the environment variable and flag that override
// it, and whether every mode takes it or only the modes that register it.
type keySpec struct {
	key  Key
	kind valueKind
	// group is where its flag stands in help.
	group Group
	def   string
	env   string
	flag  string
	// perMode settings are taken only by the modes whose registration lists them (ModeSpec.Settings).
	perMode bool
	// ledger settings are resolved by the ledger alone (LedgerSettings), never by a mode's run.
	ledger bool
	// global settings come from the workspace's endpoint, not from per-mode defaults.
	global bool
	max    int64
	// repoMax is the most a repository's file (a pack, the workspace) may set; only the operator
	// (user config, environment, flag) may go past it. 0: no such cap.
	repoMax int64
	// ceiling settings are rails a tool call may lower, never raise (a budget, a deadline, a
	// number of attempts).
	ceiling bool
	// operatorOnly settings come from the operator alone: never a pack, the workspace or a tool
	// call's argument.
	operatorOnly bool
	doc          string
}

var keySpecs = []keySpec{
	{key: BaseURL, kind: kindText, group: GroupEndpoint, def: "http://127.0.0.1:1234/v1", env: "LOCUM_BASE_URL", flag: "base-url", global: true, doc: "the OpenAI-compatible endpoint; loopback only unless --allow-remote"},
	{key: AllowRemote, kind: kindBool, group: GroupEndpoint, def: "false", env: "LOCUM_ALLOW_REMOTE", flag: "allow-remote", global: true, operatorOnly: true, doc: "allow an endpoint off this machine (sends workspace text to it)"},
	// A server that lists its models and not this one answers with whatever it loaded, under the
	// name asked: only the operator may send it anyway, never a repository's file or a tool call.
	{key: AllowUnlisted, kind: kindBool, group: GroupEndpoint, def: "false", env: "LOCUM_ALLOW_UNLISTED_MODEL", flag: "allow-unlisted-model", global: true, operatorOnly: true, doc: "send a model the server does not list (it answers with whatever it loaded, under the name asked); without it such a run is refused before any request"},
	{key: Timeout, kind: kindDuration, group: GroupModel, def: "10m", env: "LOCUM_TIMEOUT", flag: "timeout", ceiling: true, doc: "deadline for each model request as a whole"},
	{key: FirstTokenTimeout, kind: kindDurationOrZero, group: GroupModel, def: "0s", env: "LOCUM_FIRST_TOKEN_TIMEOUT", flag: "first-token-timeout", perMode: true, ceiling: true, doc: "give up on a streamed reply with no first token after this long; 0 for none"},
	{key: MaxInputBytes, kind: kindCount, group: GroupModel, def: "32768", env: "LOCUM_MAX_INPUT_BYTES", flag: "max-input-bytes", repoMax: 256 << 10, ceiling: true, doc: "refuse a prompt (or a file, for dedup) over this many bytes, before any request"},
	{key: MaxOutputTokens, kind: kindCount, group: GroupModel, def: "4096", env: "LOCUM_MAX_OUTPUT_TOKENS", flag: "max-output-tokens", perMode: true, repoMax: 32768, ceiling: true, doc: "max_tokens sent with every request"},
	{key: Effort, kind: kindEffort, group: GroupModel, def: "low", env: "LOCUM_EFFORT", flag: "effort", perMode: true, doc: "thinking cap: none, low, medium or high"},
	{key: RoleSetting, kind: kindSlug, group: GroupCommand, flag: "role", perMode: true, doc: "run the model this role is routed to: earned by a signed A/B record (locum eval), or accepted by the operator (locum roles accept)"},
	{key: MaxAttempts, kind: kindCount, group: GroupModel, def: "3", env: "LOCUM_MAX_ATTEMPTS", flag: "max-attempts", perMode: true, max: 20, ceiling: true, doc: "edit attempts before the verdict is red"},
	{key: EditFormat, kind: kindEditFormat, group: GroupModel, def: "span", env: "LOCUM_EDIT_FORMAT", flag: "edit-format", perMode: true, doc: "span (replace the span), blocks (SEARCH/REPLACE blocks) or insert (lines to insert above the span; nothing else changes)"},
	{key: EditGuard, kind: kindEditGuard, group: GroupModel, def: "span", env: "LOCUM_EDIT_GUARD", flag: "edit-guard", perMode: true, ceiling: true, doc: "what an edit of a Go file may change, checked before the verify: span (anything in the span), signature (bodies only: every declaration's signature and the file's other declarations kept) or comments (comments only); a call may narrow it, never widen it"},
	{key: Mutants, kind: kindCountOrZero, group: GroupVerify, def: "4", env: "LOCUM_MUTANTS", flag: "mutants", global: true, operatorOnly: true, perMode: true, max: 20, doc: "after a kept edit, run the verify against at most this many small changes to the span, in a scratch copy of the tree, and report how many it rejected (verify_strength=K/N); 0 for none"},
	{key: VerifyTimeout, kind: kindDuration, group: GroupVerify, def: "10m", env: "LOCUM_VERIFY_TIMEOUT", flag: "verify-timeout", perMode: true, ceiling: true, doc: "deadline for each run of the verify command"},
	{key: ExpectRed, kind: kindBool, group: GroupVerify, def: "false", env: "LOCUM_EXPECT_RED", flag: "expect-red", perMode: true, doc: "refuse, before any request, a run whose verify already exits 0 on the unchanged tree: for a bug fix whose verify must show the bug"},
	{key: NoBaseline, kind: kindBool, group: GroupVerify, def: "false", env: "LOCUM_NO_BASELINE", flag: "no-baseline", perMode: true, doc: "skip the verify run on the unchanged tree before the first request; the outcome then cannot say fixed or held (baseline=skipped)"},
	{key: MaxTurns, kind: kindCount, group: GroupModel, def: "30", env: "LOCUM_MAX_TURNS", flag: "max-turns", perMode: true, max: 200, ceiling: true, doc: "model turns (requests) an agent run may take before its status is max_turns"},
	{key: VerifyRounds, kind: kindCountOrZero, group: GroupModel, def: "2", env: "LOCUM_VERIFY_ROUNDS", flag: "verify-rounds", perMode: true, max: 10, ceiling: true, doc: "fix rounds an agent gets after a red verify, each fed the end of its output; 0 for none"},
	{key: StallTurns, kind: kindCount, group: GroupModel, def: "8", env: "LOCUM_STALL_TURNS", flag: "stall-turns", perMode: true, max: 200, ceiling: true, doc: "turns in a row without a change to the worktree before an agent run is stalled"},
	{key: MaxWords, kind: kindCount, group: GroupCommand, def: "150", env: "LOCUM_MAX_WORDS", flag: "max-words", perMode: true, doc: "the length of the digest or the handoff in words"},
	{key: EmbedModel, kind: kindText, group: GroupCommand, def: "text-embedding-nomic-embed-text-v1.5", env: "LOCUM_EMBED_MODEL", flag: "model", perMode: true, doc: "the embedding model"},
	{key: Threshold, kind: kindCosine, group: GroupCommand, env: "LOCUM_THRESHOLD", flag: "threshold", perMode: true, doc: "join files whose score is at or above this, a plain decimal from -1 to 1; unset, 0.8 for an embedding cosine and 0.5 for a lexical score"},
	{key: Method, kind: kindDedupMethod, group: GroupCommand, def: "auto", env: "LOCUM_DEDUP_METHOD", flag: "method", perMode: true, doc: "embedding (cosine of the model's vectors), lexical (estimated Jaccard of word shingles, no server), or auto: embedding when an embedding model is configured or the server lists the default one, else lexical"},
	{key: Exact, kind: kindAutoBool, group: GroupCommand, def: "auto", env: "LOCUM_EXACT", flag: "exact", perMode: true, doc: "score every pair (true), or only the candidates of random-hyperplane LSH (false); auto uses LSH when exact scoring would take longer than the embeddings took"},
	{key: BatchSize, kind: kindCount, group: GroupModel, def: "64", env: "LOCUM_BATCH_SIZE", flag: "batch-size", perMode: true, doc: "inputs per embeddings request"},
	{key: Glob, kind: kindText, group: GroupCommand, def: "*.md", env: "LOCUM_GLOB", flag: "glob", perMode: true, doc: "which files of the folder are entries"},
	// The embedding cache is the operator's file, shared by every repository: its size is theirs
	// to choose.
	{key: CacheMaxMiB, kind: kindCount, group: GroupCommand, def: "1024", env: "LOCUM_CACHE_MAX_MIB", flag: "cache-max-mib", global: true, operatorOnly: true, perMode: true, doc: "the embedding cache's size in MiB past which a run evicts the least recently used vectors (locum cache prune compacts the file)"},
	// What the host pays is the operator's to say: no repository file prices their tokens.
	{key: HostFamily, kind: kindHostFamily, group: GroupHost, def: "claude", env: "LOCUM_HOST_FAMILY", flag: "host-family", global: true, operatorOnly: true, doc: "the host's model family, whose list prices weigh the host-cost estimate: claude, gemini or gpt"},
	{key: HostPriceIn, kind: kindPrice, group: GroupHost, env: "LOCUM_HOST_PRICE_IN", flag: "host-price-in", global: true, operatorOnly: true, doc: "what the host pays per million input tokens, in US dollars; unset, its family's list price"},
	{key: HostPriceOut, kind: kindPrice, group: GroupHost, env: "LOCUM_HOST_PRICE_OUT", flag: "host-price-out", global: true, operatorOnly: true, doc: "what the host pays per million output tokens, in US dollars; unset, its family's list price"},
	{key: HostPriceCached, kind: kindPrice, group: GroupHost, env: "LOCUM_HOST_PRICE_CACHED", flag: "host-price-cached", global: true, operatorOnly: true, doc: "what the host pays per million cached input tokens, in US dollars; unset, its family's list price"},
	{key: HostBytesPerToken, kind: kindRatio, group: GroupHost, def: "4", env: "LOCUM_HOST_BYTES_PER_TOKEN", flag: "host-bytes-per-token", global: true, operatorOnly: true, doc: "bytes of text to one host token, for the host-cost estimate"},
	// Like the context, the turns the host has left are the host's to say, or the operator's:
	// global, so no repository file sets them.
	{key: HostTurnsLeft, kind: kindCountOrZero, group: GroupHost, def: "10", env: "LOCUM_HOST_TURNS_LEFT", flag: "host-turns-left", global: true, perMode: true, max: 100000, doc: "turns the host's session has left, each re-reading what a run put in its context, for the host-cost estimate"},
	// What the host's context holds is the host's to say, or the operator's: global, so no
	// repository file sets it.
	{key: HostContextTokens, kind: kindCountOrZero, group: GroupHost, env: "LOCUM_HOST_CONTEXT_TOKENS", flag: "host-context-tokens", global: true, perMode: true, max: 10_000_000, doc: "tokens your session re-reads on every turn (its context), which each host turn a delegation saves is worth; unset, 44000"},
	{key: HostHoldsSpan, kind: kindBool, group: GroupHost, def: "false", env: "LOCUM_HOST_HOLDS_SPAN", flag: "host-holds-span", global: true, perMode: true, doc: "you already read the span: doing the edit yourself would take no turn to read it"},
	{key: DelegateWhen, kind: kindDelegateWhen, group: GroupHost, def: "pays", env: "LOCUM_DELEGATE_WHEN", flag: "delegate-when", global: true, operatorOnly: true, perMode: true, doc: "pays: refuse, before any request, a transform whose role's own runs expect a loss at its size, or a workflow expected to cost the host more than doing it itself (locum status shows the break-even); always: never refuse for cost"},
	// The host's transcripts are the operator's files, outside every repository: only the
	// operator names them, and only the ledger reads them. Its one "mode", the ledger (no mode
	// of the contract), keeps it out of every run's settings and so out of every journal.
	{key: HostTranscripts, kind: kindText, group: GroupHost, def: "", env: "LOCUM_HOST_TRANSCRIPTS", flag: "host-transcripts", global: true, operatorOnly: true, ledger: true, doc: "the folder of the host's own session transcripts (Claude Code's ~/.claude/projects), which locum ledger reads to measure what each run's call cost the host; unset, nothing is read"},
	{key: Jobs, kind: kindCount, group: GroupCommand, def: "4", env: "LOCUM_JOBS", flag: "jobs", perMode: true, max: 64, repoMax: 16, ceiling: true, doc: "items of a workflow (cells of a bench) run at once, across the servers (each server takes no more than the slots it reports)"},
	{key: Servers, kind: kindText, group: GroupEndpoint, def: "", env: "LOCUM_SERVERS", flag: "servers", global: true, operatorOnly: true, perMode: true, doc: "the pool of endpoints a workflow's items (a bench's cells) are spread over, separated by commas, each under the loopback rail; empty for the one base URL"},
	// Going on past a red baseline spends the model's requests on items no edit can make green:
	// the operator's choice alone.
	{key: OnRedBaseline, kind: kindOnRedBaseline, group: GroupVerify, def: "stop", env: "LOCUM_ON_RED_BASELINE", flag: "on-red-baseline", global: true, operatorOnly: true, perMode: true, doc: "stop: refuse a workflow step, before any model request, whose items (two or more) are all judged by one verify that already fails on the tree they start from; continue: run them anyway"},
	{key: K, kind: kindCount, group: GroupCommand, def: "5", env: "LOCUM_K", flag: "k", perMode: true, doc: "turns per task and arm of an A/B capture"},
	// The verify's sandbox is the operator's alone: global, so no pack or workspace sets it, and
	// no tool takes it as an argument.
	{key: VerifyNetwork, kind: kindBool, group: GroupVerify, def: "false", env: "LOCUM_VERIFY_NETWORK", flag: "verify-network", global: true, operatorOnly: true, perMode: true, doc: "let the verify reach the network; in a sandbox it has only a loopback of its own otherwise"},
	{key: SandboxSetting, kind: kindSandbox, group: GroupVerify, def: "auto", env: "LOCUM_SANDBOX", flag: "sandbox", global: true, operatorOnly: true, perMode: true, doc: "how the verify is contained: auto (bubblewrap where it runs, else a process group), require (refuse without bubblewrap), or none (a process group, your choice)"},
	{key: VerifyHome, kind: kindBool, group: GroupVerify, def: "false", env: "LOCUM_VERIFY_HOME", flag: "verify-home", global: true, operatorOnly: true, perMode: true, doc: "let a sandboxed verify see your HOME, read-only, rather than a scratch one"},
	{key: VerifyCaches, kind: kindText, group: GroupVerify, def: "", env: "LOCUM_VERIFY_CACHES", flag: "verify-caches", global: true, operatorOnly: true, perMode: true, doc: "more directories a sandboxed verify may write, separated by colons (Go's build cache is writable already)"},
}

// repositorySets says a file in the repository may set the setting: a pack or the workspace for
// a mode's setting, the workspace's endpoint for the base URL (Resolve).
func (s keySpec) repositorySets() bool {
	return !s.operatorOnly && (!s.global || s.key == BaseURL)
}

func (s keySpec) appliesTo(mode string) bool {
	if !s.perMode && !s.ledger {
		return true
	}
	return registeredTakes(mode, s.key)
}

// Setting is one resolved value and the source it came from.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// SetForRun says the caller set the setting on purpose for this run: a flag, a tool call's
// argument, or the environment, rather than a default, a pack, the workspace or the user config.
func (s Setting) SetForRun() bool {
	return strings.HasPrefix(s.Source, "flag ") || strings.HasPrefix(s.Source, "argument ") || strings.HasPrefix(s.Source, "env ")
}

// Settings are the resolved settings of one mode, in a fixed order.
type Settings struct {
	Mode  string
	items []Setting
}

// All returns every setting in a fixed order.
func (s *Settings) All() []Setting { return append([]Setting(nil), s.items...) }

// Get returns the setting named key, or false when the mode has no such setting.
func (s *Settings) Get(key Key) (Setting, bool) {
	for _, it := range s.items {
		if it.Key == key.name {
			return it, true
		}
	}
	return Setting{}, false
}

// String returns the value of key ("" when unset).
func (s *Settings) String(key Key) string {
	it, _ := s.Get(key)
	return it.Value
}

// Int returns the value of a whole-number setting. Values were checked when resolved.
func (s *Settings) Int(key Key) int64 {
	n, _ := strconv.ParseInt(s.String(key), 10, 64)
	return n
}

// Float returns the value of a decimal setting.
func (s *Settings) Float(key Key) float64 {
	f, _ := strconv.ParseFloat(s.String(key), 64)
	return f
}

// Duration returns the value of a duration setting.
func (s *Settings) Duration(key Key) time.Duration {
	d, _ := time.ParseDuration(s.String(key))
	return d
}

// Set replaces a setting's value and source (a role's measured effort replaces the default).
func (s *Settings) Set(key Key, value, source string) {
	for i := range s.items {
		if s.items[i].Key == key.name {
			s.items[i].Value, s.items[i].Source = value, source
		}
	}
}

// OverridesBuiltin reports whether someone chose the value of key: a flag, the environment, the
// workspace or a pack of the user's own, not the built-in default or a built-in pack. A key the
// mode does not take overrides nothing.
func (s *Settings) OverridesBuiltin(key Key) bool {
	it, ok := s.Get(key)
	if !ok || it.Source == "default" {
		return false
	}
	for _, ref := range BuiltinRefs() {
		if it.Source == "pack "+ref {
			return false
		}
	}
	return true
}

// Bool returns the value of a boolean setting.
func (s *Settings) Bool(key Key) bool { return s.String(key) == "true" }

// SettingError is a value that does not parse as its setting's kind. Callers treat it as bad
// input (exit 2): it is never read as the default.
type SettingError struct {
	Key, Source, Value, Want string
	// Widen, where set, is how the operator raises the setting past a cap. It is worded for
	// every front end at once: the flag is the same on a command and on locum mcp, and a tool
	// call has no way to raise it.
	Widen *Widen
}

// above says whether the checked value now is past the checked value limit: a larger number,
// a longer deadline, or none (0) where limit is one.
func (s keySpec) above(now, limit string) bool {
	switch s.kind {
	case kindCount, kindCountOrZero:
		n, _ := strconv.ParseInt(now, 10, 64)
		l, _ := strconv.ParseInt(limit, 10, 64)
		return n > l
	case kindEditGuard:
		return guardWidth[now] > guardWidth[limit]
	case kindDuration, kindDurationOrZero:
		n, _ := time.ParseDuration(now)
		l, _ := time.ParseDuration(limit)
		if s.kind == kindDurationOrZero && (n == 0 || l == 0) {
			return n == 0 && l != 0
		}
		return n > l
	}
	return false
}

// guardWidth orders the edit guards by what they let an edit change.
var guardWidth = map[string]int{"comments": 0, "signature": 1, "span": 2}

// operatorSource words a setting's source for a message a tool call gets as well: a flag is the
// operator's, named without the dashes a host would take for its own.
func operatorSource(source string) string {
	if flag, ok := strings.CutPrefix(source, "flag --"); ok {
		return "the operator's " + flag + " flag"
	}
	return source
}

// Widen names the operator's ways to raise a capped setting.
type Widen struct{ Flag, Env string }

func (e *SettingError) Error() string {
	want := e.Want
	if e.Widen != nil {
		want += fmt.Sprintf("; only the operator may raise it further (the %s flag, or %s)", e.Widen.Flag, e.Widen.Env)
	}
	return fmt.Sprintf("%s: %q is not %s (setting %s)", e.Source, e.Value, want, e.Key)
}

// ModeError is a mode no composed pack declares.
type ModeError struct {
	Mode string
}

func (e *ModeError) Error() string {
	return fmt.Sprintf("no composed pack declares mode %q; compose a pack that does (tools/local-llm declares %s)", e.Mode, strings.Join(Modes, ", "))
}

// Lookup reads an environment variable; os.LookupEnv fits.
type Lookup func(string) (string, bool)

// Resolve gives every setting of mode its value, from (weakest first) the built-in default, each
// composed pack in cascade order, the workspace, the user config, the LOCUM_* environment, and flags (keyed by
// flag name without dashes; only flags the user set). It is the one place settings resolve.
//
// The empty mode resolves only the settings every command shares (the endpoint).
func (c *Composition) Resolve(mode string, env Lookup, flags map[string]string) (*Settings, error) {
	return c.ResolveCall(mode, env, flags, nil)
}

// ResolveCall is Resolve for a tool call: args are the call's own settings (keyed by setting,
// as max_input_bytes), applied after the operator's flags, with the source "argument NAME",
// NAME the setting's flag in snake_case as the call names it.
func (c *Composition) ResolveCall(mode string, env Lookup, flags, args map[string]string) (*Settings, error) {
	if mode != "" && !c.Declares(mode) {
		return nil, &ModeError{Mode: mode}
	}
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	out := &Settings{Mode: mode}
	for _, spec := range keySpecs {
		if mode == "" && !spec.global || mode != "" && !spec.appliesTo(mode) {
			continue
		}
		set := Setting{Key: spec.key.name, Value: spec.def, Source: "default"}
		if !spec.global {
			for _, p := range c.Packs {
				if raw, ok := p.Contributes.Modes[mode][spec.key.name]; ok {
					set = Setting{Key: spec.key.name, Value: modeValue(raw), Source: "pack " + p.Ref}
				}
			}
		}
		if ws := c.Workspace; ws != nil {
			if raw, ok := ws.Overrides[mode][spec.key.name]; ok && !spec.global {
				set = Setting{Key: spec.key.name, Value: modeValue(raw), Source: "workspace " + WorkspaceFile}
			}
			if spec.key == BaseURL && ws.Endpoint.BaseURL != "" {
				set = Setting{Key: spec.key.name, Value: ws.Endpoint.BaseURL, Source: "workspace " + WorkspaceFile}
			}
		}
		if u := c.User; u != nil {
			if spec.key == BaseURL && u.Endpoint.BaseURL != "" {
				set = Setting{Key: spec.key.name, Value: u.Endpoint.BaseURL, Source: u.source()}
			}
			if spec.key.name == "allow_remote" && u.Endpoint.AllowRemote != nil {
				set = Setting{Key: spec.key.name, Value: strconv.FormatBool(*u.Endpoint.AllowRemote), Source: u.source()}
			}
			switch {
			case spec.key == VerifyNetwork && u.Verify.Network != nil:
				set = Setting{Key: spec.key.name, Value: strconv.FormatBool(*u.Verify.Network), Source: u.source()}
			case spec.key == SandboxSetting && u.Verify.Sandbox != "":
				set = Setting{Key: spec.key.name, Value: u.Verify.Sandbox, Source: u.source()}
			case spec.key == VerifyHome && u.Verify.Home != nil:
				set = Setting{Key: spec.key.name, Value: strconv.FormatBool(*u.Verify.Home), Source: u.source()}
			case spec.key == VerifyCaches && len(u.Verify.Caches) > 0:
				set = Setting{Key: spec.key.name, Value: strings.Join(u.Verify.Caches, string(os.PathListSeparator)), Source: u.source()}
			case spec.key == HostTranscripts && u.Host.Transcripts != "":
				set = Setting{Key: spec.key.name, Value: u.Host.Transcripts, Source: u.source()}
			}
		}
		if spec.env != "" {
			if v, ok := env(spec.env); ok && v != "" {
				set = Setting{Key: spec.key.name, Value: v, Source: "env " + spec.env}
			}
		}
		if v, ok := flags[spec.flag]; ok && spec.flag != "" {
			set = Setting{Key: spec.key.name, Value: v, Source: "flag --" + spec.flag}
		}
		if spec.repoMax > 0 && fromRepository(set.Source) {
			norm, err := spec.check(set.Value)
			if n, _ := strconv.ParseInt(norm, 10, 64); err == nil && n > spec.repoMax {
				return nil, &SettingError{Key: spec.key.name, Source: set.Source, Value: set.Value,
					Want: fmt.Sprintf("a number up to %d when a file in the repository sets it", spec.repoMax), Widen: &Widen{Flag: spec.flag, Env: spec.env}}
			}
		}
		if v, ok := args[spec.key.name]; ok && spec.flag != "" && !spec.operatorOnly {
			prior := set
			set = Setting{Key: spec.key.name, Value: v, Source: "argument " + strings.ReplaceAll(spec.flag, "-", "_")}
			// A budget, a deadline, a count of attempts is a rail: a call may lower it, never
			// raise it past what the operator, the repository or the default would have it be.
			if spec.ceiling {
				was, _ := spec.check(prior.Value)
				if now, err := spec.check(v); err == nil && spec.above(now, was) {
					want := fmt.Sprintf("at most %s, this run's (%s): a tool call may lower it, never raise it", was, operatorSource(prior.Source))
					if spec.kind == kindEditGuard {
						want = fmt.Sprintf("no wider than %s, this run's (%s): a tool call may narrow it, never widen it", was, operatorSource(prior.Source))
					}
					return nil, &SettingError{Key: spec.key.name, Source: set.Source, Value: v, Want: want, Widen: &Widen{Flag: spec.flag, Env: spec.env}}
				}
			}
		}
		// A setting with no default is unset until a source sets it; the mode chooses then.
		if set.Source == "default" && set.Value == "" {
			out.items = append(out.items, set)
			continue
		}
		norm, err := spec.check(set.Value)
		if err != nil {
			return nil, &SettingError{Key: spec.key.name, Source: set.Source, Value: set.Value, Want: err.Error()}
		}
		set.Value = norm
		out.items = append(out.items, set)
	}
	return out, nil
}

// Declares reports whether a composed pack declares the mode.
func (c *Composition) Declares(mode string) bool {
	for _, p := range c.Packs {
		if _, ok := p.Contributes.Modes[mode]; ok {
			return true
		}
	}
	return false
}

// DeclaredModes lists the modes the composition declares, in the order of Modes.
func (c *Composition) DeclaredModes() []string {
	var out []string
	for _, m := range Modes {
		if c.Declares(m) {
			out = append(out, m)
		}
	}
	var others []string
	for _, p := range c.Packs {
		for m := range p.Contributes.Modes {
			if !slices.Contains(Modes, m) && !slices.Contains(others, m) {
				others = append(others, m)
			}
		}
	}
	slices.Sort(others)
	return append(out, others...)
}

// modeProblems checks what the schema cannot of the modes a pack or the workspace names beyond
// the contract's own: each must be a registered mode, each key one of its settings, each value
// one its setting's kind parses.
func modeProblems(file, prefix string, byMode map[string]map[string]json.RawMessage) []schema.Problem {
	var out []schema.Problem
	for _, mode := range slices.Sorted(maps.Keys(byMode)) {
		if slices.Contains(Modes, mode) {
			continue
		}
		ptr := prefix + "/" + mode
		if !KnownMode(mode) {
			out = append(out, schema.Problem{File: file, Pointer: ptr, Message: fmt.Sprintf("%q is not a mode this locum knows (%s); fix the name, or use the locum that registers it", mode, strings.Join(Modes, ", "))})
			continue
		}
		for _, key := range slices.Sorted(maps.Keys(byMode[mode])) {
			spec, ok := specOf(key)
			switch {
			case !ok || spec.global || !spec.appliesTo(mode):
				out = append(out, schema.Problem{File: file, Pointer: ptr + "/" + key, Message: fmt.Sprintf("%q is not a setting of mode %s", key, mode)})
			default:
				if _, err := spec.check(modeValue(byMode[mode][key])); err != nil {
					out = append(out, schema.Problem{File: file, Pointer: ptr + "/" + key, Message: fmt.Sprintf("want %v", err)})
				}
			}
		}
	}
	return out
}

// Flag is the command-line flag of the setting, without dashes; "" for one with none.
func (k Key) Flag() string {
	s, _ := specOf(k.name)
	return s.flag
}

// OperatorOnly says the setting named key comes from the operator alone: a front end words it
// as the operator's option, never as an argument a call may give.
func OperatorOnly(key string) bool {
	s, _ := specOf(key)
	return s.operatorOnly
}

// specOf is the declared setting named key.
func specOf(key string) (keySpec, bool) {
	for _, s := range keySpecs {
		if s.key.name == key {
			return s, true
		}
	}
	return keySpec{}, false
}

var (
	wholeNumber  = regexp.MustCompile(`^[0-9]+$`)
	plainDecimal = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	slug         = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

// check validates a value of the spec's kind and returns it in canonical form. The error text
// says what was wanted.
func (s keySpec) check(v string) (string, error) {
	switch s.kind {
	case kindCount:
		if !wholeNumber.MatchString(v) {
			return "", fmt.Errorf("a whole number")
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return "", fmt.Errorf("a whole number of at least 1")
		}
		if s.max > 0 && n > s.max {
			return "", errors.New(s.bounds())
		}
		return strconv.FormatInt(n, 10), nil
	case kindCountOrZero:
		if !wholeNumber.MatchString(v) {
			return "", fmt.Errorf("a whole number")
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || s.max > 0 && n > s.max {
			return "", errors.New(s.bounds())
		}
		return strconv.FormatInt(n, 10), nil
	case kindCosine:
		if !plainDecimal.MatchString(v) {
			return "", errors.New(s.bounds())
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < -1 || f > 1 {
			return "", errors.New(s.bounds())
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	case kindDuration:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return "", errors.New(s.bounds())
		}
		return v, nil
	case kindDurationOrZero:
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return "", errors.New(s.bounds())
		}
		return v, nil
	case kindBool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", errors.New(s.bounds())
		}
		return strconv.FormatBool(b), nil
	case kindSlug:
		if v != "" && !slug.MatchString(v) {
			return "", errors.New(s.bounds())
		}
		return v, nil
	case kindPrice, kindRatio:
		if !plainDecimal.MatchString(v) {
			return "", errors.New(s.bounds())
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(f, 0) || f < 0 || s.kind == kindRatio && f == 0 {
			return "", errors.New(s.bounds())
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	if allowed, ok := kindValues[s.kind]; ok {
		if !slices.Contains(allowed, v) {
			return "", errors.New(s.bounds())
		}
	}
	return v, nil
}

// FlagSpec describes the flag of one setting, for the CLI to declare.
type FlagSpec struct {
	Name    string // without dashes
	Key     string
	Env     string
	Default string
	Doc     string
	Bool    bool
	// Number is "int" for a whole number, "float" for a decimal, "" for any other value.
	Number string
	// OperatorOnly settings are the operator's alone (a flag, the environment, the user
	// config): no tool call takes them as an argument.
	OperatorOnly bool
	// Repository says a file in the repository (a pack, the workspace) may set it.
	Repository bool
	// Group is where the flag stands in a command's help.
	Group Group
}

// SettingFlags lists the flags of the settings a mode has ("" for the shared ones), in a fixed
// order, so every command declares them the same way and passes on exactly those the user set.
func SettingFlags(mode string) []FlagSpec {
	return flagSpecs(func(s keySpec) bool {
		if mode == "" {
			return s.global && !s.perMode && !s.ledger
		}
		return s.appliesTo(mode)
	})
}

// AllFlags lists the flag of every setting that has one, in the table's order.
func AllFlags() []FlagSpec {
	return flagSpecs(func(keySpec) bool { return true })
}

// LedgerFlags lists the flags of the settings only the ledger takes (LedgerSettings).
func LedgerFlags() []FlagSpec {
	return flagSpecs(func(s keySpec) bool { return s.global && s.ledger })
}

// ServeFlags lists the flags a server of tool calls takes from its operator: the shared settings
// and every operator-only setting of any mode. No call may set an operator-only setting, so
// without its flag the operator of a long-lived server could set it only by environment or the
// user config.
func ServeFlags() []FlagSpec {
	return flagSpecs(func(s keySpec) bool {
		return s.global && (!s.perMode && !s.ledger || s.operatorOnly)
	})
}

func flagSpecs(include func(keySpec) bool) []FlagSpec {
	var out []FlagSpec
	for _, s := range keySpecs {
		if s.flag == "" || !include(s) {
			continue
		}
		f := FlagSpec{Name: s.flag, Key: s.key.name, Env: s.env, Default: s.def, Doc: s.doc, Bool: s.kind == kindBool,
			OperatorOnly: s.operatorOnly, Repository: s.repositorySets(), Group: s.group}
		switch s.kind {
		case kindCount, kindCountOrZero:
			f.Number = "int"
		case kindCosine, kindPrice, kindRatio:
			f.Number = "float"
		}
		out = append(out, f)
	}
	return out
}

// CheckFlag checks a flag's value the way the resolver would, for a flag value the command line
// parser refused: the same *SettingError whatever the source. nil when name is no setting's flag.
func CheckFlag(name, value string) error {
	for _, s := range keySpecs {
		if s.flag != name {
			continue
		}
		if _, err := s.check(value); err != nil {
			return &SettingError{Key: s.key.name, Source: "flag --" + name, Value: value, Want: err.Error()}
		}
		return nil
	}
	return nil
}

// fromRepository reports a setting that came from a file someone committed: a pack or the
// workspace. Such a file may tune a rail within its cap, never widen it past.
func fromRepository(source string) bool {
	return strings.HasPrefix(source, "pack ") || strings.HasPrefix(source, "workspace ")
}

// CapProblems finds the settings a repository's file (the workspace, or a pack that is not
// built in) gives above what a repository may set, such as max_input_bytes over 262144. A command
// refuses such a value unless the operator sets the key; `packs validate` reports it, so that it
// never passes a file every command refuses by default.
func CapProblems(file string, ws *Workspace, p *Pack) []schema.Problem {
	if ws != nil {
		return capProblems(file, "/overrides", ws.Overrides)
	}
	if p != nil && !p.Builtin() {
		return capProblems(file, "/contributes/modes", p.Contributes.Modes)
	}
	return nil
}

func capProblems(file, prefix string, byMode map[string]map[string]json.RawMessage) []schema.Problem {
	var out []schema.Problem
	for _, mode := range slices.Sorted(maps.Keys(byMode)) {
		for _, spec := range keySpecs {
			raw, ok := byMode[mode][spec.key.name]
			if !ok || spec.repoMax <= 0 {
				continue
			}
			if n, err := strconv.ParseInt(modeValue(raw), 10, 64); err == nil && n > spec.repoMax {
				out = append(out, schema.Problem{File: file, Pointer: prefix + "/" + mode + "/" + spec.key.name,
					Message: fmt.Sprintf("%d is over %d, the most a file in the repository may set: every command refuses it unless the operator sets %s (--%s or %s)", n, spec.repoMax, spec.key.name, spec.flag, spec.env)})
			}
		}
	}
	return out
}
