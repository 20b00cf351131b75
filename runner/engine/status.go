package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/untrusted"
)

// ModelPresence is whether a configured model is among those the server lists.
type ModelPresence struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	Listed bool   `json:"listed"`
	// BuiltIn is a model named by locum's own default rather than by the user; it stands only
	// where the server lists it.
	BuiltIn bool `json:"-"`
}

// RoleModel is the model a role resolves to and where from.
type RoleModel struct {
	Role string `json:"role"`
	ModelPresence
}

// StatusModels are the models a status looks for among those the server lists: each nil or
// empty when unset.
type StatusModels struct {
	Chat, Embed *ModelPresence
	Roles       []RoleModel
}

// StatusReport is what `locum status` says about the endpoint.
type StatusReport struct {
	Endpoint string `json:"endpoint"`
	Source   string `json:"endpoint_source"`
	Up       bool   `json:"up"`
	// Server and ServerName are null when no server answers.
	Server     *rails.ServerKind `json:"server"`
	ServerName *string           `json:"server_name"`
	Version    string            `json:"version"`
	LatencyMs  int64             `json:"latency_ms"`
	Models     []client.Model    `json:"models"`
	ChatModel  *ModelPresence    `json:"chat_model"`
	EmbedModel *ModelPresence    `json:"embed_model"`
	// RoleModels is the model each role resolves to (earned or accepted), for a status that
	// names no chat model; roles with no routing are left out.
	RoleModels []RoleModel `json:"role_models"`
	Error      *ErrorInfo  `json:"error"`
	// Start is what would start a server, said when none answers.
	Start []string `json:"start"`
	// EmbedNote says why no embedding model is reported.
	EmbedNote string `json:"embed_note,omitempty"`
	// BreakEven is where delegation pays the host, per mode and role, from the ledger of this
	// repository's runs or the documented prior; the front end fills it.
	BreakEven []cost.Rule `json:"break_even"`
	// BreakEvenNote says which journals the break-even left out, and why; "" where none.
	BreakEvenNote string `json:"break_even_note,omitempty"`
	// ModelRefusal is the refusal a run asking the chat model would meet before any request (a
	// server that lists models and not this one, unless allow_unlisted_model); nil where the run
	// would go ahead, or where no chat model was asked for.
	ModelRefusal *ErrorInfo `json:"model_refusal,omitempty"`
	// err is the probe's error, behind Error, and refusal ModelRefusal's, for Reword.
	err, refusal error
}

// Reword names the settings the report's messages advise on as the front end takes them: each
// front end calls it once before it shows the report.
func (r *StatusReport) Reword(name func(setting string) string) {
	if r.Error != nil && r.err != nil {
		r.Error.Message = Reword(r.Error.Message, r.err, name)
	}
	if r.ModelRefusal != nil && r.refusal != nil {
		r.ModelRefusal.Message = Reword(r.ModelRefusal.Message, r.refusal, name)
	}
	r.EmbedNote = rails.Words(r.EmbedNote, name)
}

// NoEmbedModel is what status says when no embedding model fits the server, as a template of
// the settings it names (StatusReport.Reword words them).
const NoEmbedModel = "no embedding model configured: pass {embed_model} (dedup: {model}) or set LOCUM_EMBED_MODEL"

// CheckStatus probes the server and reports on it and on the configured models (nil when unset).
func CheckStatus(ctx context.Context, c *client.Client, source string, want StatusModels) *StatusReport {
	chat, embed := want.Chat, want.Embed
	rep := &StatusReport{Endpoint: c.BaseURL(), Source: source, Models: []client.Model{}, ChatModel: chat, EmbedModel: embed, RoleModels: roleModels(want.Roles)}
	start := time.Now()
	info, err := c.Probe(ctx)
	rep.LatencyMs = time.Since(start).Milliseconds()
	if err != nil {
		_, kind, _ := Classify(err)
		rep.Error = &ErrorInfo{Kind: kind, Message: err.Error()}
		rep.err = err
		var ue *client.UnreachableError
		var le *client.LoadingError
		switch {
		case errors.As(err, &ue):
			rep.Start = client.StartCommands(rep.Endpoint)
		case errors.As(err, &le) && le.Kind != "":
			kind, name := le.Kind, client.ServerName(le.Kind)
			rep.Server, rep.ServerName = &kind, &name
		}
		return rep
	}
	rep.Up = true
	name := client.ServerName(info.Kind)
	rep.Server, rep.ServerName, rep.Version = &info.Kind, &name, info.Version
	if info.Models != nil {
		rep.Models = info.Models
	}
	for _, p := range []*ModelPresence{chat, embed} {
		if p != nil {
			p.Listed = info.Has(p.ID)
		}
	}
	for i := range rep.RoleModels {
		rep.RoleModels[i].Listed = info.Has(rep.RoleModels[i].ID)
	}
	// The built-in embedding model is LM Studio's name for it; on a server that does not list it,
	// it is no configuration at all, and dedup picks what the server lists by the same rule.
	if embed != nil && embed.BuiltIn && !embed.Listed {
		if picked := info.EmbeddingModel(); picked != "" {
			rep.EmbedModel = &ModelPresence{ID: picked, Source: client.PickedEmbedSource, Listed: true}
		} else {
			rep.EmbedModel, rep.EmbedNote = nil, NoEmbedModel
		}
	}
	return rep
}

// StatusTimeout bounds a status probe: a server that takes longer is as good as down to a caller
// deciding where to send work.
const StatusTimeout = 5 * time.Second

// CheckEndpoint checks the endpoint the shared settings name. An endpoint the loopback rail refuses is
// an error, before any request; a server that does not answer is a report with Up false.
func CheckEndpoint(ctx context.Context, shared *packs.Settings, want StatusModels) *StatusReport {
	base, _ := shared.Get(packs.BaseURL)
	c, err := statusClient(shared)
	if err != nil {
		// Refused before any request: still a report, so --json has its one object.
		_, kind, _ := Classify(err)
		return &StatusReport{Endpoint: base.Value, Source: base.Source, Models: []client.Model{}, ChatModel: want.Chat, EmbedModel: want.Embed,
			RoleModels: roleModels(want.Roles), Error: &ErrorInfo{Kind: kind, Message: err.Error()}, Start: []string{}, err: err}
	}
	rep := CheckStatus(ctx, c, base.Source, want)
	rep.refuseUnlisted(shared.Bool(packs.AllowUnlisted))
	return rep
}

// refuseUnlisted says, by the rule a run's connect step applies (ConnectChat), whether a run
// asking the chat model would be refused: the server lists models, none of them it, and the
// operator did not allow an unlisted one.
func (r *StatusReport) refuseUnlisted(allowed bool) {
	chat := r.ChatModel
	if !r.Up || chat == nil || chat.Listed || len(r.Models) == 0 || allowed {
		return
	}
	e := &ModelNotListedError{Model: chat.ID, Endpoint: r.Endpoint, Refused: true}
	for _, m := range r.Models {
		e.Listed = append(e.Listed, m.ID)
	}
	_, kind, _ := Classify(e)
	r.ModelRefusal, r.refusal = &ErrorInfo{Kind: kind, Message: e.Error()}, e
}

// roleModels is a copy of the roles' models, never nil, so --json has a list.
func roleModels(roles []RoleModel) []RoleModel {
	return append([]RoleModel{}, roles...)
}

// statusClient is a client for a probe of the endpoint the shared settings name, under the
// loopback rail and StatusTimeout.
func statusClient(shared *packs.Settings) (*client.Client, error) {
	base, _ := shared.Get(packs.BaseURL)
	u, err := rails.ParseEndpoint(base.Value, shared.Bool(packs.AllowRemote))
	if err != nil {
		return nil, err
	}
	return client.New(client.Config{BaseURL: u, AllowRemote: shared.Bool(packs.AllowRemote), Timeout: StatusTimeout}), nil
}

// ModelNotListedError is a model the server does not list, where the caller needs one it does.
type ModelNotListedError struct {
	Model, Endpoint string
	Listed          []string
	// Refused says a run refused it before any request (ConnectChat): its message then says
	// what the person can do, and Classify makes it a refusal of its own kind.
	Refused bool
}

func (e *ModelNotListedError) Error() string { return e.Words(rails.FlagName) }

// Words is the message with the settings it advises on named by name.
func (e *ModelNotListedError) Words(name func(string) string) string {
	listed := "no model"
	if len(e.Listed) > 0 {
		listed = strings.Join(e.Listed, ", ")
	}
	// The names are the server's: escaped, as all its text.
	msg := fmt.Sprintf("the server at %s does not list %s (it lists %s)", e.Endpoint, untrusted.Escape(e.Model), untrusted.Escape(listed))
	if e.Refused {
		msg += rails.Words("; it would answer with whatever model it has loaded, under the name asked, so nothing was sent: name a model it lists with {model}, or send this one anyway with {allow_unlisted_model}", name)
	}
	return msg
}

// IdentifyModel asks the server on the endpoint for the model and returns the server's identity
// of its weights ("" where the server gives none). A server that answers and does not list the
// model is a *ModelNotListedError: llama-server answers any name with the one model it loaded, so
// a name it does not list would be judged on other weights. A server that does not answer is the
// probe's error.
func IdentifyModel(ctx context.Context, shared *packs.Settings, model string) (string, error) {
	c, err := statusClient(shared)
	if err != nil {
		return "", err
	}
	info, err := c.Probe(ctx)
	if err != nil {
		return "", err
	}
	if err := RequireListed(info, c.BaseURL(), model); err != nil {
		return "", err
	}
	return c.ModelWeights(ctx)[model], nil
}

// RequireListed is a *ModelNotListedError unless the server at endpoint lists model.
func RequireListed(info *client.ServerInfo, endpoint, model string) error {
	if info.Has(model) {
		return nil
	}
	e := &ModelNotListedError{Model: model, Endpoint: endpoint}
	for _, m := range info.Models {
		e.Listed = append(e.Listed, m.ID)
	}
	return e
}

// ChatModels lists the models the server on the endpoint serves that are not embedding models,
// in the server's order, for a message that tells the person what they could accept. An
// endpoint the rail refuses, or a server that does not answer, is the error.
func ChatModels(ctx context.Context, shared *packs.Settings) ([]string, error) {
	rep := CheckEndpoint(ctx, shared, StatusModels{})
	if !rep.Up {
		return nil, errors.New(rep.Error.Message)
	}
	return rep.ChatModelIDs(), nil
}
