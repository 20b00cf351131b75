//go:build realmodel

package realmodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// manifest is what scripts/real-model-setup installed, as its manifest.json says.
type manifest struct {
	LlamaServer struct {
		Path    string `json:"path"`
		SHA256  string `json:"sha256"`
		Commit  string `json:"commit"`
		Version string `json:"version"`
	} `json:"llama_server"`
	ChatModel modelFile `json:"chat_model"`
	// SmallChatModel is SmolLM2-135M-Instruct, which the bench runs beside the chat model.
	SmallChatModel modelFile `json:"small_chat_model"`
	EmbedModel     modelFile `json:"embed_model"`
}

// modelFile is one GGUF the setup installed.
type modelFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Name   string `json:"name"`
}

// cacheDir is the setup script's cache, by the same rule the script follows.
func cacheDir() string {
	if d := os.Getenv("LOCUM_REAL_MODEL_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "locum", "real-model")
}

func loadManifest() (*manifest, error) {
	file := filepath.Join(cacheDir(), "manifest.json")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: run scripts/real-model-setup first (LOCUM_REAL_MODEL_CACHE sets its cache)", err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, p := range []string{m.LlamaServer.Path, m.ChatModel.Path, m.SmallChatModel.Path, m.EmbedModel.Path} {
		if p == "" {
			return nil, fmt.Errorf("%s is from an older setup; run scripts/real-model-setup again", file)
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s names %s: %w; run scripts/real-model-setup again", file, p, err)
		}
	}
	return &m, nil
}

// llamaServer is one running llama-server, behind a recording proxy.
type llamaServer struct {
	cmd     *exec.Cmd
	log     string
	done    chan struct{} // closed when the process has ended; waitErr is then its error
	waitErr error
	proxy   *httptest.Server
	rec     *recorder
	// URL is the proxy's, which locum is pointed at; Direct the server's own.
	URL, Direct string
}

// BaseURL is the OpenAI-compatible endpoint locum takes, through the recording proxy.
func (s *llamaServer) BaseURL() string { return s.URL + "/v1" }

// startLlamaServer starts llama-server on a free loopback port with args, and waits until
// /health says the model is loaded, the process ends, or ctx is done.
func startLlamaServer(ctx context.Context, bin, logFile string, args ...string) (*llamaServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	args = append([]string{"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--threads", strconv.Itoa(runtime.NumCPU())}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	s := &llamaServer{cmd: cmd, log: logFile, done: make(chan struct{}), Direct: fmt.Sprintf("http://127.0.0.1:%d", port)}
	go func() {
		s.waitErr = cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	if err := s.waitHealthy(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	target, _ := url.Parse(s.Direct)
	s.rec = &recorder{added: make(chan struct{}, 1)}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	rp.ModifyResponse = s.rec.capture
	s.proxy = httptest.NewServer(rp)
	s.URL = s.proxy.URL
	return s, nil
}

// waitHealthy polls /health: llama-server answers 503 while it loads the model and 200 once it
// can serve. The process ending first is an error with its log's end.
func (s *llamaServer) waitHealthy(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Direct+"/health", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("llama-server ended before it was ready (%v):\n%s", s.waitErr, tail(s.log, 2000))
		case <-ctx.Done():
			return fmt.Errorf("llama-server not ready: %w:\n%s", ctx.Err(), tail(s.log, 2000))
		case <-tick.C:
		}
	}
}

// Stop ends the server and its proxy.
func (s *llamaServer) Stop() {
	if s.proxy != nil {
		s.proxy.Close()
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(file string, n int) string {
	data, _ := os.ReadFile(file)
	if len(data) > n {
		data = data[len(data)-n:]
	}
	return string(data)
}

// served is what the server itself said about one chat completion: its usage and timings.
type served struct {
	Path         string
	PromptTokens int64
	OutputTokens int64
	HasUsage     bool
	PredictedN   int64
	PredictedMS  float64
	HasTimings   bool
	Status       int
}

// recorder keeps what the server said in each chat or embeddings reply it passed through, in order.
type recorder struct {
	mu    sync.Mutex
	calls []served
	// added is signalled after each reply is recorded: a reply is recorded when the proxy closes
	// its body, which may come after locum has exited.
	added chan struct{}
}

// WaitLen waits until at least n replies are recorded, or a minute (only a hang) has passed.
func (r *recorder) WaitLen(n int) {
	deadline := time.After(time.Minute)
	for r.Len() < n {
		select {
		case <-r.added:
		case <-deadline:
			return
		}
	}
}

// capture reads a reply through to its end as it streams, so locum still reads it as it
// arrives, and records the usage and timings the server put in it.
func (r *recorder) capture(resp *http.Response) error {
	if p := resp.Request.URL.Path; !strings.HasSuffix(p, "/chat/completions") && !strings.HasSuffix(p, "/embeddings") {
		return nil
	}
	var buf bytes.Buffer
	body := resp.Body
	resp.Body = &teeCloser{Reader: io.TeeReader(body, &buf), close: func() error {
		err := body.Close()
		r.record(resp.Request.URL.Path, resp.StatusCode, resp.Header, buf.Bytes())
		return err
	}}
	return nil
}

type teeCloser struct {
	io.Reader
	close func() error
	once  sync.Once
	err   error
}

func (t *teeCloser) Close() error {
	t.once.Do(func() { t.err = t.close() })
	return t.err
}

// wireReply is the part of a chat completion or stream chunk that carries the server's counts.
type wireReply struct {
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Timings *struct {
		PredictedN  int64   `json:"predicted_n"`
		PredictedMS float64 `json:"predicted_ms"`
	} `json:"timings"`
}

func (r *recorder) record(path string, status int, header http.Header, body []byte) {
	s := served{Path: path, Status: status}
	apply := func(w wireReply) {
		if w.Usage != nil {
			s.PromptTokens, s.OutputTokens, s.HasUsage = w.Usage.PromptTokens, w.Usage.CompletionTokens, true
		}
		if w.Timings != nil {
			s.PredictedN, s.PredictedMS, s.HasTimings = w.Timings.PredictedN, w.Timings.PredictedMS, true
		}
	}
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		var w wireReply
		if json.Unmarshal(body, &w) == nil {
			apply(w)
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var w wireReply
			if json.Unmarshal([]byte(data), &w) == nil {
				apply(w)
			}
		}
	}
	r.mu.Lock()
	r.calls = append(r.calls, s)
	n := len(r.calls)
	r.mu.Unlock()
	select {
	case r.added <- struct{}{}:
	default:
	}
	if dir := os.Getenv("LOCUM_REAL_MODEL_RECORD"); dir != "" {
		saveReply(dir, n, status, header, body)
	}
}

// saveReply writes one reply as the scripted server's fixtures are kept: NNN.headers (the status
// line and headers) and NNN.body, byte for byte, for runner/scripted/testdata/real-servers.
func saveReply(dir string, n, status int, header http.Header, body []byte) {
	var h strings.Builder
	fmt.Fprintf(&h, "HTTP/1.1 %d %s\n", status, http.StatusText(status))
	keys := make([]string, 0, len(header))
	for k := range header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range header[k] {
			fmt.Fprintf(&h, "%s: %s\n", k, v)
		}
	}
	base := filepath.Join(dir, fmt.Sprintf("%03d", n))
	if err := os.MkdirAll(dir, 0o755); err == nil {
		_ = os.WriteFile(base+".headers", []byte(h.String()), 0o644)
		_ = os.WriteFile(base+".body", body, 0o644)
	}
}

// Since returns the replies recorded after the first n.
func (r *recorder) Since(n int) []served {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]served(nil), r.calls[n:]...)
}

// Len is how many replies have been recorded.
func (r *recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// suite is what every test of the tier shares: the locum binary, the chat server and the
// embedding server.
type suite struct {
	locum string
	chat  *llamaServer
	embed *llamaServer
	model string
	man   *manifest
	logs  string
	// state is the one user state directory every locum the tier starts shares: the operator's
	// key, so every journal a run outside a repository writes there is sealed with it, and the
	// ledger over the tier's runs reads them all.
	state string
}

var shared *suite

func TestMain(m *testing.M) {
	os.Exit(runTier(m))
}

func runTier(m *testing.M) int {
	man, err := loadManifest()
	if err != nil {
		fmt.Fprintln(os.Stderr, "realmodel:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "locum-realmodel")
	if err != nil {
		fmt.Fprintln(os.Stderr, "realmodel:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	logs := os.Getenv("LOCUM_REAL_MODEL_LOGS")
	if logs == "" {
		logs = dir
	}
	bin := filepath.Join(dir, "locum")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/locumdev/locum/cmd/locum").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "realmodel: go build: %v\n%s", err, out)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	chat, err := startLlamaServer(ctx, man.LlamaServer.Path, filepath.Join(logs, "llama-server-chat.log"),
		"--model", man.ChatModel.Path, "--jinja", "--ctx-size", "8192", "--parallel", "1", "--alias", chatModel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "realmodel:", err)
		return 1
	}
	defer chat.Stop()
	fmt.Fprintf(os.Stderr, "realmodel: %s ready in %s on %s (%s; %s)\n", man.ChatModel.Name, time.Since(start).Round(time.Millisecond), chat.Direct, man.LlamaServer.Version, man.ChatModel.Path)
	start = time.Now()
	// One slot holding the whole 512-token window: a BERT model reads each input in one batch,
	// and llama-server splits the context between its slots.
	embed, err := startLlamaServer(ctx, man.LlamaServer.Path, filepath.Join(logs, "llama-server-embed.log"),
		"--model", man.EmbedModel.Path, "--embeddings", "--ctx-size", "512", "--batch-size", "512", "--ubatch-size", "512",
		"--parallel", "1", "--alias", embedModel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "realmodel:", err)
		return 1
	}
	defer embed.Stop()
	fmt.Fprintf(os.Stderr, "realmodel: %s ready in %s on %s (%s)\n", man.EmbedModel.Name, time.Since(start).Round(time.Millisecond), embed.Direct, man.EmbedModel.Path)
	shared = &suite{locum: bin, chat: chat, embed: embed, model: chatModel, man: man, logs: logs, state: filepath.Join(dir, "state")}
	code := m.Run()
	shared.printLedger()
	return code
}

// printLedger prints what locum ledger makes of the tier's runs outside a repository (its
// transforms, summaries and screens): the verdict per mode, as a person would read it.
func (s *suite) printLedger() {
	work, err := os.MkdirTemp("", "locum-realmodel-ledger")
	if err != nil {
		return
	}
	defer os.RemoveAll(work)
	cmd := exec.Command(s.locum, "ledger")
	cmd.Dir = work
	cmd.Env = s.env(work)
	out, err := cmd.CombinedOutput()
	fmt.Fprintf(os.Stderr, "realmodel: locum ledger over the tier's runs outside a repository (err %v):\n%s", err, out)
}

// chatModel and embedModel are the names llama-server serves the models under (--alias).
const (
	chatModel  = "qwen2.5-coder-1.5b-instruct"
	embedModel = "all-minilm-l6-v2"
)

// env is the environment every locum the tier starts runs in: a HOME and user config of the
// test's own, so no setting leaks from one test to another, the tier's one state directory (see
// suite.state), and the chat server as the endpoint. The developer's own LOCUM_* settings
// stay out: every run sees only what the test sets.
func (s *suite) env(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOCUM_") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+s.state, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"LOCUM_BASE_URL="+s.chat.BaseURL(),
		// The tier measures the model on every task, small spans included: the pay gate, which
		// would stop a losing role, stays out of the measurement.
		"LOCUM_DELEGATE_WHEN=always")
}

// run is one locum command's outcome.
type run struct {
	stdout, stderr string
	exit           int
	result         map[string]any
}

// locum runs the locum binary in dir with a HOME of the test's own, so no user state leaks in.
func (s *suite) locumIn(t *testing.T, dir, home string, args ...string) run {
	t.Helper()
	return s.locumWithin(t, 15*time.Minute, dir, home, args...)
}

// locumWithin is locumIn with the process killed after limit, for a test whose time is its own
// bound.
func (s *suite) locumWithin(t *testing.T, limit time.Duration, dir, home string, args ...string) run {
	t.Helper()
	return s.locumEnv(t, limit, dir, s.env(home), args...)
}

// locumEnv is locumWithin in the environment env, for a test that sets more than suite.env does.
func (s *suite) locumEnv(t *testing.T, limit time.Duration, dir string, env []string, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.locum, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
	default:
		t.Fatalf("locum %v: %v", args, err)
	}
	if line := strings.TrimSpace(r.stdout); strings.HasPrefix(line, "{") {
		_ = json.Unmarshal([]byte(line), &r.result)
	}
	return r
}
