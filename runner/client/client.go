// Package client talks to the local model server under the rails: the HTTP transport that dials
// through the loopback guard, the server probe, chat completions and embeddings decoded and
// classified, the prompt measured against the loaded context, and the typed errors of each. It
// imports no other runner package: the engine and the modes build on it.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/locumdev/locum/rails"
)

// DefaultMaxResponseBytes caps a response body; a server that sends more is cut off.
const DefaultMaxResponseBytes = 16 << 20

// Config is how to reach the server. BaseURL must have passed rails.ParseEndpoint.
type Config struct {
	BaseURL     *url.URL
	AllowRemote bool
	// Timeout bounds each request as a whole, body included. A long prefill on a laptop is
	// slow but not dead, so the default is generous (10m).
	Timeout time.Duration
	// FirstTokenTimeout, when set, ends a streamed request that has produced no token yet.
	FirstTokenTimeout time.Duration
	MaxResponseBytes  int64
	// Dial replaces the loopback dialer; tests and the offline checks set it.
	Dial rails.DialFunc
	// Transport, when set, carries requests instead of the network: the offline checks replay
	// recorded replies through it, in memory.
	Transport http.RoundTripper
	// Observe, when set, hears a streamed reply grow; ObservePrompt hears the server read the
	// prompt, where its stream says how far it got.
	Observe       StreamObserver
	ObservePrompt PromptObserver
}

// Client talks to one OpenAI-compatible server through the rails.
type Client struct {
	cfg        Config
	http       *http.Client
	chat       openai.ChatCompletionService
	embeddings openai.EmbeddingService

	mu     sync.Mutex
	server *ServerInfo
	shown  map[string]shownModel
	// embedFloats: the server refused encoding_format base64, so ask it for JSON arrays.
	embedFloats bool
}

// New builds a client. It reads nothing from the environment: the SDK's OPENAI_* defaults
// are never applied, proxies are ignored, redirects refused and retries off.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	dial := cfg.Dial
	if dial == nil {
		dial = rails.LoopbackDialer(cfg.AllowRemote)
	}
	transport := &http.Transport{
		Proxy:               nil, // never HTTP_PROXY: a proxy would carry the prompt off the machine
		DialContext:         dial,
		MaxIdleConns:        4,
		IdleConnTimeout:     30 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	var next http.RoundTripper = transport
	if cfg.Transport != nil {
		next = cfg.Transport
	}
	hc := &http.Client{
		Transport: &capTransport{next: next, limit: cfg.MaxResponseBytes},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			return &RedirectError{From: via[len(via)-1].URL.String(), To: req.URL.String()}
		},
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL.String()),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithMiddleware(httpErrorMiddleware),
	}
	return &Client{
		cfg:        cfg,
		http:       hc,
		chat:       openai.NewChatCompletionService(opts...),
		embeddings: openai.NewEmbeddingService(opts...),
		shown:      map[string]shownModel{},
	}
}

// BaseURL is the endpoint the client talks to.
func (c *Client) BaseURL() string { return c.cfg.BaseURL.String() }

// httpErrorMiddleware turns an error status into an *HTTPError carrying the server's own message,
// before the SDK tries to read it as OpenAI's error shape (which llama-server's 500s are not).
func httpErrorMiddleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res.StatusCode < 400 {
		return res, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return nil, &HTTPError{Method: req.Method, URL: req.URL.String(), Status: res.StatusCode, Message: serverMessage(body)}
}

// serverMessage finds the human part of an error body: {"error":{"message":...}},
// {"error":"..."}, {"message":...}, or the text itself.
func serverMessage(body []byte) string {
	var shapes struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &shapes) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var flat string
		switch {
		case json.Unmarshal(shapes.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(shapes.Error, &flat) == nil && flat != "":
			return flat
		case shapes.Message != "":
			return shapes.Message
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 300 {
		text = text[:300] + "..."
	}
	return text
}

// capTransport cuts a response body off at a limit.
type capTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t *capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if res.ContentLength > t.limit {
		res.Body.Close()
		return nil, &TooLargeError{Limit: t.limit}
	}
	res.Body = &capBody{rc: res.Body, left: t.limit, limit: t.limit}
	return res, nil
}

type capBody struct {
	rc          io.ReadCloser
	left, limit int64
}

func (b *capBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, &TooLargeError{Limit: b.limit}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *capBody) Close() error { return b.rc.Close() }

// rootURL is the server's root: the base URL without its trailing /v1, where Ollama, LM Studio
// and llama-server keep their own endpoints.
func (c *Client) rootURL() string {
	u := *c.cfg.BaseURL
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	return strings.TrimSuffix(u.String(), "/")
}

// getJSON fetches a server endpoint outside the OpenAI API, through the same rails.
func (c *Client) getJSON(ctx context.Context, method, target string, body any, into any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(err, method, target)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return res.Header, c.transportError(err, method, target)
	}
	if res.StatusCode >= 400 {
		return res.Header, &HTTPError{Method: method, URL: target, Status: res.StatusCode, Message: serverMessage(data)}
	}
	if into != nil {
		if err := json.Unmarshal(data, into); err != nil {
			return res.Header, fmt.Errorf("%s %s: not JSON: %w", method, target, err)
		}
	}
	return res.Header, nil
}
