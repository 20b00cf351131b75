package verify

import (
	"bytes"
	"embed"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
)

//go:embed replies/*.json replies/*.sse
var replies embed.FS

// recorded is an embedded reply; a missing one is empty, which fails the check that needs it.
func recorded(name string) []byte {
	data, _ := replies.ReadFile("replies/" + name)
	return data
}

// reply is one answer of the replay transport.
type reply struct {
	status int
	header map[string]string
	body   []byte
	stream bool
}

// replay is an http.RoundTripper that answers from memory: the offline checks talk to a "server"
// that is a map, so no socket is ever opened.
type replay struct {
	mu     sync.Mutex
	routes map[string][]reply // "METHOD /path" to replies in order; the last repeats
	served map[string]int
	bodies [][]byte // request bodies of chat completions, in order
	count  int
}

func newReplay() *replay {
	return &replay{routes: map[string][]reply{}, served: map[string]int{}}
}

func (r *replay) on(method, path string, replies ...reply) *replay {
	r.routes[method+" "+path] = replies
	return r
}

func jsonReply(body string) reply { return reply{status: 200, body: []byte(body)} }

// mimic installs what a server kind answers to locum's probe.
func (r *replay) mimic(kind string) *replay {
	if install, ok := mimics[kind]; ok {
		install(r)
	}
	return r
}

// mimics install each kind's answers to the probe, by the kind's name.
var mimics = map[string]func(r *replay){
	"ollama": func(r *replay) {
		r.on("GET", "/v1/models", jsonReply(string(recorded("ollama-models.json"))))
		r.on("GET", "/api/version", jsonReply(`{"version":"0.17.4"}`))
		r.on("GET", "/api/ps", jsonReply(`{"models":[]}`))
	},
	"llama-server": func(r *replay) {
		r.on("GET", "/v1/models", reply{status: 200, header: map[string]string{"Server": "llama.cpp"}, body: recorded("llama-server-models.json")})
	},
	"lmstudio": func(r *replay) {
		r.on("GET", "/v1/models", jsonReply(`{"data":[{"id":"m","owned_by":"organization_owner"}]}`))
		r.on("GET", "/api/v0/models", jsonReply(`{"data":[{"id":"m","state":"loaded","loaded_context_length":32768}]}`))
	},
	"vllm": func(r *replay) {
		r.on("GET", "/v1/models", jsonReply(`{"data":[{"id":"m","owned_by":"vllm","max_model_len":32768}]}`))
		r.on("GET", "/version", jsonReply(`{"version":"0.11.0"}`))
	},
}

func (r *replay) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	r.mu.Lock()
	r.count++
	key := req.Method + " " + req.URL.Path
	if strings.HasSuffix(req.URL.Path, "/chat/completions") || strings.HasSuffix(req.URL.Path, "/embeddings") {
		r.bodies = append(r.bodies, body)
	}
	list := r.routes[key]
	var rep reply
	if len(list) == 0 {
		rep = reply{status: 404, body: []byte(`{"error":{"message":"not found"}}`)}
	} else {
		i := min(r.served[key], len(list)-1)
		rep = list[i]
		r.served[key]++
	}
	r.mu.Unlock()
	h := http.Header{"Content-Type": {"application/json"}}
	if rep.stream {
		h.Set("Content-Type", "text/event-stream")
	}
	for k, v := range rep.header {
		h.Set(k, v)
	}
	return &http.Response{StatusCode: rep.status, Status: http.StatusText(rep.status), Header: h, Body: io.NopCloser(bytes.NewReader(rep.body)),
		ContentLength: int64(len(rep.body)), Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// chatBodies are the chat and embeddings request bodies the replay received.
func (r *replay) chatBodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

// requests is how many requests the replay answered.
func (r *replay) requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// lastBody decodes the last chat or embeddings request body.
func (r *replay) lastBody() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bodies) == 0 {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(r.bodies[len(r.bodies)-1], &m)
	return m
}
