package engine

import (
	"context"
	"sync"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
)

// UsualEndpoints are where the local servers listen by default, in the order locum prefers
// them: LM Studio, Ollama, llama-server, vLLM.
var UsualEndpoints = []string{
	"http://127.0.0.1:1234/v1",
	"http://127.0.0.1:11434/v1",
	"http://127.0.0.1:8080/v1",
	"http://127.0.0.1:8000/v1",
}

// FindServers probes every endpoint at once, each under the loopback rail and StatusTimeout,
// and returns a report per endpoint in the order given.
func FindServers(ctx context.Context, endpoints []string) []*StatusReport {
	out := make([]*StatusReport, len(endpoints))
	var wg sync.WaitGroup
	for i, endpoint := range endpoints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, err := rails.ParseEndpoint(endpoint, false)
			if err != nil {
				_, kind, _ := Classify(err)
				out[i] = &StatusReport{Endpoint: endpoint, Models: []client.Model{}, Error: &ErrorInfo{Kind: kind, Message: err.Error()}, Start: []string{}}
				return
			}
			c := client.New(client.Config{BaseURL: u, Timeout: StatusTimeout})
			out[i] = CheckStatus(ctx, c, "", StatusModels{})
		}()
	}
	wg.Wait()
	return out
}

// ChatModelIDs are the models a report lists that are not embedding models, and EmbedModelIDs
// the ones that are, by the rule that picks an embedding model.
func (r *StatusReport) ChatModelIDs() []string { return r.modelIDs(false) }

// EmbedModelIDs: see ChatModelIDs.
func (r *StatusReport) EmbedModelIDs() []string { return r.modelIDs(true) }

func (r *StatusReport) modelIDs(embedding bool) []string {
	info := &client.ServerInfo{Models: r.Models}
	var out []string
	for _, m := range r.Models {
		if info.IsEmbedding(m) == embedding {
			out = append(out, m.ID)
		}
	}
	return out
}
