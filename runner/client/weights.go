package client

import "context"

// ModelWeights returns the server's identity of the weights behind each model it lists with one:
// Ollama's content digest (GET /api/tags), llama-server's file, type, parameters and size, LM
// Studio's model key and file, vLLM's model root. A server that says nothing, and any failure to
// ask, gives no entry, since an identity is evidence where there is one and never a reason to
// stop.
func (c *Client) ModelWeights(ctx context.Context) map[string]string {
	info, err := c.Probe(ctx)
	if err != nil {
		return map[string]string{}
	}
	return dialectOf(info.Kind).weights(ctx, c, info)
}

// listedWeights are the weights the probe read for each model, where it read any.
func (s *ServerInfo) listedWeights() map[string]string {
	out := map[string]string{}
	for _, m := range s.Models {
		if m.Weights != "" {
			out[m.ID] = m.Weights
		}
	}
	return out
}
