package scripted

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A reply's timings go beside its usage, whole or streamed, as llama-server sends them; a reply
// without them has none.
func TestTimingsGoBesideTheUsage(t *testing.T) {
	answer, timings := "done", json.RawMessage(`{"predicted_n":20,"predicted_ms":400}`)
	for _, tc := range []struct {
		name  string
		reply Reply
		want  bool
	}{
		{"whole", Reply{Answer: &answer, Timings: timings}, true},
		{"streamed", Reply{StreamAnswer: &answer, Timings: timings}, true},
		{"whole without", Reply{Answer: &answer}, false},
		{"streamed without", Reply{StreamAnswer: &answer}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(Script{Routes: []Route{{Method: "POST", Path: "/v1/chat/completions", Replies: []Reply{tc.reply}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			var usage string
			for line := range strings.SplitSeq(string(body), "\n") {
				if strings.Contains(line, `"usage"`) {
					usage = strings.TrimPrefix(line, "data: ")
				}
			}
			var got struct {
				Usage   json.RawMessage `json:"usage"`
				Timings *struct {
					N  int     `json:"predicted_n"`
					MS float64 `json:"predicted_ms"`
				} `json:"timings"`
			}
			if err := json.Unmarshal([]byte(usage), &got); err != nil || len(got.Usage) == 0 {
				t.Fatalf("no usage in %q: %v", body, err)
			}
			if (got.Timings != nil) != tc.want || tc.want && (got.Timings.N != 20 || got.Timings.MS != 400) {
				t.Errorf("timings %+v, want them: %v (body %q)", got.Timings, tc.want, body)
			}
		})
	}
}

// A reply that is Gone drops its request unanswered, and every later request meets a closed port.
func TestGoneDropsTheRequestAndStopsListening(t *testing.T) {
	s, err := Start(Script{Routes: []Route{
		{Method: "GET", Path: "/v1/models", Replies: []Reply{{JSON: json.RawMessage(`{"data":[]}`)}}},
		{Method: "POST", Path: "/v1/chat/completions", Replies: []Reply{{Gone: true}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp, err := c.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`)); err == nil {
		resp.Body.Close()
		t.Fatalf("the request that made the server go was answered: %s", resp.Status)
	}
	if resp, err := c.Get(s.URL + "/v1/models"); err == nil {
		resp.Body.Close()
		t.Fatalf("a request after the server went was answered: %s", resp.Status)
	}
}
