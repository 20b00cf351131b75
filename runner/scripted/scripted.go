// Package scripted is an OpenAI-compatible test server that replays recorded replies of real
// servers (Ollama and llama-server, in testdata/real-servers) and the documented shapes of others
// (LM Studio, vLLM), quirks included. It is imported by tests only.
package scripted

import (
	"bufio"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

//go:embed testdata/real-servers
var fixtures embed.FS

// Reply is one scripted answer.
type Reply struct {
	Status  int               `json:"status,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// JSON is a body given as JSON in a script; it wins over Body.
	JSON json.RawMessage `json:"json,omitempty"`
	// Fixture names a recorded reply, folder/name (ollama/chat_plain); its status, headers and
	// body are replayed.
	Fixture string `json:"fixture,omitempty"`
	// Drip writes the body a few bytes at a time with this pause between writes.
	Drip Duration `json:"drip,omitempty"`
	// Hang waits this long before answering at all.
	Hang Duration `json:"hang,omitempty"`
	// Redirect answers 302 to this URL.
	Redirect string `json:"redirect,omitempty"`
	// Answer is a chat completion whose message content is this text (finish_reason stop,
	// usage 100 in and 20 out); StreamAnswer is the same as a server-sent event stream.
	Answer       *string `json:"answer,omitempty"`
	StreamAnswer *string `json:"stream_answer,omitempty"`
	// Timings are llama-server's decode figures ({"predicted_n": 20, "predicted_ms": 400}),
	// sent beside the usage of an Answer or a StreamAnswer, as llama-server sends them.
	Timings json.RawMessage `json:"timings,omitempty"`
	// AnswerFile is Answer read from a file, relative to the script.
	AnswerFile string `json:"answer_file,omitempty"`
	// Calls is a chat completion whose message makes these native tool calls, in the shape
	// llama-server sends (content null, finish_reason tool_calls).
	Calls []Call `json:"calls,omitempty"`
	// Gone makes the server go away at this request, as a server that crashed does: it stops
	// listening, so every later request meets a closed port, and drops this request's connection
	// unanswered.
	Gone bool `json:"gone,omitempty"`
	// When makes the reply answer only a request whose body contains this text, each time one
	// does; a route's replies without it answer the other requests in order. Parallel runs reach
	// a server in no fixed order, so their replies are chosen by what the request asks.
	When string `json:"when,omitempty"`
}

// Call is one scripted tool call. Arguments may be a JSON object (sent as its text, as the
// OpenAI shape wants) or a string sent as it is (to script malformed arguments). ID nil makes
// one up; "" sends the empty id llama-server sends.
type Call struct {
	ID        *string         `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Request is one request the server received.
type Request struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// Route answers one method and path with replies in order; the last one repeats.
type Route struct {
	Method  string  `json:"method"`
	Path    string  `json:"path"`
	Replies []Reply `json:"replies"`
}

// Script is a server's whole behaviour, as a testscript file gives it.
type Script struct {
	// Mimic first installs the probe endpoints of a server: ollama, llama-server, lmstudio, vllm.
	Mimic  string  `json:"mimic,omitempty"`
	Routes []Route `json:"routes"`
}

// Server is a running scripted server on loopback.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	routes   map[string][]Reply
	served   map[string]int
	requests []Request
	log      io.Writer
	busy     atomic.Int64 // nanoseconds spent in handlers
}

// ServedTime is the time the server spent answering, summed over requests: what a benchmark
// subtracts to get locum's own overhead.
func (s *Server) ServedTime() time.Duration { return time.Duration(s.busy.Load()) }

// SetLog makes the server write each request it receives to w as a JSON line.
func (s *Server) SetLog(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = w
}

// New starts an empty server on 127.0.0.1; unknown routes answer 404.
func New() *Server {
	s := &Server{routes: map[string][]Reply{}, served: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// Start starts a server running script.
func Start(script Script) (*Server, error) {
	return StartAt("", script)
}

// StartAt starts a server running script listening on addr (HOST:PORT), or on a free loopback
// port when addr is "": a test of what probes a server's usual port needs one there.
func StartAt(addr string, script Script) (*Server, error) {
	s := &Server{routes: map[string][]Reply{}, served: map[string]int{}}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			s.Listener.Close()
			return nil, err
		}
		s.Listener.Close()
		s.Listener = l
	}
	s.Start()
	if script.Mimic != "" {
		if err := s.Mimic(script.Mimic); err != nil {
			s.Close()
			return nil, err
		}
	}
	for _, r := range script.Routes {
		s.On(r.Method, r.Path, r.Replies...)
	}
	return s, nil
}

// BaseURL is the server's OpenAI base URL.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// On sets the replies for method and path, replacing earlier ones.
func (s *Server) On(method, path string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := method + " " + path
	s.routes[key] = replies
	s.served[key] = 0
}

// Requests returns every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequestsTo returns the requests to one path.
func (s *Server) RequestsTo(path string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { s.busy.Add(int64(time.Since(start))) }()
	body, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path}
	if json.Valid(body) {
		rec.Body = body
	} else if len(body) > 0 {
		rec.Body, _ = json.Marshal(string(body))
	}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	if s.log != nil {
		line, _ := json.Marshal(rec)
		fmt.Fprintf(s.log, "%s\n", line)
	}
	key := r.Method + " " + r.URL.Path
	reply, found := s.pick(key, body)
	s.mu.Unlock()
	if !found {
		http.Error(w, `{"error":{"message":"no scripted reply for `+key+`"}}`, http.StatusNotFound)
		return
	}
	s.write(w, r, reply)
}

// pick chooses the reply to a request: the first whose When the body contains, else the next of
// those without When, the last repeating. s.mu is held.
func (s *Server) pick(key string, body []byte) (Reply, bool) {
	var seq []Reply
	for _, r := range s.routes[key] {
		if r.When == "" {
			seq = append(seq, r)
		} else if strings.Contains(string(body), r.When) {
			return r, true
		}
	}
	if len(seq) == 0 {
		return Reply{}, false
	}
	i := min(s.served[key], len(seq)-1)
	s.served[key]++
	return seq[i], true
}

func (s *Server) write(w http.ResponseWriter, r *http.Request, reply Reply) {
	if reply.Gone {
		s.goAway(w)
		return
	}
	if reply.Hang > 0 {
		select {
		case <-time.After(time.Duration(reply.Hang)):
		case <-r.Context().Done():
			return
		}
	}
	if reply.Redirect != "" {
		http.Redirect(w, r, reply.Redirect, http.StatusFound)
		return
	}
	if reply.Fixture != "" {
		f, err := Fixture(reply.Fixture)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		f.Drip, f.Hang = reply.Drip, 0
		reply = f
	}
	if reply.Answer != nil {
		reply.JSON = withTimings(ChatCompletion(*reply.Answer), reply.Timings)
	}
	if len(reply.Calls) > 0 {
		reply.JSON = ToolCallCompletion(reply.Calls)
	}
	if reply.StreamAnswer != nil {
		reply.Body = chatStream(*reply.StreamAnswer, reply.Timings)
		reply.Headers = map[string]string{"Content-Type": "text/event-stream"}
	}
	body := []byte(reply.Body)
	if len(reply.JSON) > 0 {
		body = reply.JSON
		if reply.Headers == nil {
			reply.Headers = map[string]string{"Content-Type": "application/json"}
		}
	}
	for k, v := range reply.Headers {
		if strings.EqualFold(k, "Content-Length") || strings.EqualFold(k, "Transfer-Encoding") {
			continue
		}
		w.Header().Set(k, v)
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	if reply.Drip == 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	for i := 0; i < len(body); i += 8 {
		end := min(i+8, len(body))
		if _, err := w.Write(body[i:end]); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-time.After(time.Duration(reply.Drip)):
		case <-r.Context().Done():
			return
		}
	}
}

// Fixture loads a recorded reply: folder/name, from name.headers and name.body.
func Fixture(name string) (Reply, error) {
	base := "testdata/real-servers/" + name
	head, err := fs.ReadFile(fixtures, base+".headers")
	if err != nil {
		return Reply{}, fmt.Errorf("fixture %s: %w", name, err)
	}
	body, err := fs.ReadFile(fixtures, base+".body")
	if err != nil {
		return Reply{}, fmt.Errorf("fixture %s: %w", name, err)
	}
	reply := Reply{Headers: map[string]string{}, Body: string(body)}
	sc := bufio.NewScanner(strings.NewReader(string(head)))
	first := true
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if first {
			first = false
			parts := strings.Fields(line)
			if len(parts) < 2 {
				return Reply{}, fmt.Errorf("fixture %s: bad status line %q", name, line)
			}
			reply.Status, err = strconv.Atoi(parts[1])
			if err != nil {
				return Reply{}, fmt.Errorf("fixture %s: bad status line %q", name, line)
			}
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			reply.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return reply, nil
}

// MustFixture is Fixture for tests that cannot go on without it.
func MustFixture(name string) Reply {
	r, err := Fixture(name)
	if err != nil {
		panic(err)
	}
	return r
}

// Mimic installs the endpoints a server kind answers to a probe, from recordings where there are
// any: ollama and llama-server replay real replies; lmstudio and vllm give their documented shapes.
func (s *Server) Mimic(kind string) error {
	install, ok := mimics[kind]
	if !ok {
		return fmt.Errorf("no server kind %q to mimic (ollama, llama-server, lmstudio, vllm)", kind)
	}
	install(s)
	return nil
}

// mimics install each kind's probe endpoints, by the kind's name.
var mimics = map[string]func(s *Server){
	"ollama": func(s *Server) {
		s.On("GET", "/v1/models", MustFixture("ollama/models"))
		s.On("GET", "/api/version", jsonOf(`{"version":"0.17.4"}`))
		s.On("GET", "/api/ps", jsonOf(`{"models":[{"name":"tiny:latest","model":"tiny:latest","context_length":2048}]}`))
		s.On("POST", "/api/show", jsonOf(`{"capabilities":["completion","tools"],"details":{"family":"llama"}}`))
		s.On("GET", "/", Reply{Body: "Ollama is running", Headers: map[string]string{"Content-Type": "text/plain"}})
	},
	"llama-server": func(s *Server) {
		s.On("GET", "/v1/models", MustFixture("llama-server/models"))
		s.On("GET", "/props", jsonOf(`{"default_generation_settings":{"n_ctx":2048},"build_info":"b4747"}`))
		s.On("GET", "/health", jsonOf(`{"status":"ok"}`))
	},
	"lmstudio": func(s *Server) {
		s.On("GET", "/v1/models", jsonOf(`{"object":"list","data":[{"id":"qwen3-coder-30b","object":"model","owned_by":"organization_owner"},{"id":"text-embedding-nomic-embed-text-v1.5","object":"model","owned_by":"organization_owner"}]}`))
		s.On("GET", "/api/v0/models", jsonOf(`{"object":"list","data":[{"id":"qwen3-coder-30b","object":"model","type":"llm","state":"loaded","max_context_length":262144,"loaded_context_length":32768},{"id":"text-embedding-nomic-embed-text-v1.5","object":"model","type":"embeddings","state":"not-loaded","max_context_length":2048}]}`))
	},
	"vllm": func(s *Server) {
		s.On("GET", "/v1/models", jsonOf(`{"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","owned_by":"vllm","root":"Qwen/Qwen3-8B","max_model_len":32768}]}`))
		s.On("GET", "/version", jsonOf(`{"version":"0.11.0"}`))
	},
}

func jsonOf(v string) Reply { return Reply{JSON: json.RawMessage(v)} }

// LoadScript reads a script from a JSON file.
func LoadScript(path string) (Script, error) {
	var sc Script
	data, err := os.ReadFile(path)
	if err != nil {
		return sc, err
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return sc, fmt.Errorf("%s: %w", path, err)
	}
	for i := range sc.Routes {
		for j := range sc.Routes[i].Replies {
			r := &sc.Routes[i].Replies[j]
			if r.AnswerFile == "" {
				continue
			}
			data, err := os.ReadFile(filepath.Join(filepath.Dir(path), r.AnswerFile))
			if err != nil {
				return sc, fmt.Errorf("%s: %w", path, err)
			}
			text := string(data)
			r.Answer = &text
		}
	}
	return sc, nil
}

// RefusedAddr returns a loopback address where nothing listens, for "no server" tests.
func RefusedAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:9"
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Duration is a time.Duration that a script writes as text: "50ms", "2s".
type Duration time.Duration

// UnmarshalJSON reads "50ms" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var text string
	if json.Unmarshal(b, &text) == nil {
		v, err := time.ParseDuration(text)
		*d = Duration(v)
		return err
	}
	var n int64
	err := json.Unmarshal(b, &n)
	*d = Duration(n)
	return err
}

// ChatCompletion is a whole chat reply with content, as servers send it.
func ChatCompletion(content string) json.RawMessage {
	c, _ := json.Marshal(content)
	return json.RawMessage(`{"id":"chatcmpl-scripted","object":"chat.completion","model":"scripted","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":` +
		string(c) + `}}],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`)
}

// ToolCallCompletion is a chat reply that makes tool calls.
func ToolCallCompletion(calls []Call) json.RawMessage {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	var out []call
	for i, c := range calls {
		id := fmt.Sprintf("call_scripted_%d", i+1)
		if c.ID != nil {
			id = *c.ID
		}
		args := string(c.Arguments)
		var text string
		if json.Unmarshal(c.Arguments, &text) == nil {
			args = text
		}
		if len(c.Arguments) == 0 {
			args = "{}"
		}
		out = append(out, call{ID: id, Type: "function", Function: fn{Name: c.Name, Arguments: args}})
	}
	data, _ := json.Marshal(out)
	return json.RawMessage(`{"id":"chatcmpl-scripted","object":"chat.completion","model":"scripted","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":` +
		string(data) + `}}],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`)
}

// ChatStream is content as a server-sent event stream, a few characters a chunk, with usage in a
// last chunk of its own (as Ollama sends it).
func ChatStream(content string) string { return chatStream(content, nil) }

// chatStream is ChatStream with timings, where given, in the usage chunk.
func chatStream(content string, timings json.RawMessage) string {
	var b strings.Builder
	for i := 0; i < len(content); i += 16 {
		piece, _ := json.Marshal(content[i:min(i+16, len(content))])
		fmt.Fprintf(&b, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", piece)
	}
	b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	usage := json.RawMessage(`{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`)
	fmt.Fprintf(&b, "data: %s\n\n", withTimings(usage, timings))
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// withTimings is the JSON object reply with a "timings" member, where timings is given.
func withTimings(reply, timings json.RawMessage) json.RawMessage {
	if len(timings) == 0 {
		return reply
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(reply, &fields) != nil {
		return reply
	}
	fields["timings"] = timings
	out, err := json.Marshal(fields)
	if err != nil {
		return reply
	}
	return out
}

// goAway stops the server listening and drops the connection of the request w answers. Close is
// no way to do it from a handler: it waits for the handler to return.
func (s *Server) goAway(w http.ResponseWriter) {
	_ = s.Listener.Close()
	if h, ok := w.(http.Hijacker); ok {
		if conn, _, err := h.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
