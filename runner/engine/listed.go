package engine

import (
	"context"
	"errors"

	"github.com/locumdev/locum/packs"
)

// Why a model the server does not list was sent (ModelUncheckedEvent.Why).
const (
	UncheckedListsNone = "the server lists no model, so the name could not be checked"
	UncheckedAllowed   = "allow_unlisted_model: the operator sent it anyway"
)

// ConnectChat is the connect step of a mode that asks a chat model: the endpoint under the
// loopback rail (Connect), then the server's list of models, asked before anything slow runs, so
// a server that does not answer ends the run here, naming the endpoint, before a baseline verify
// or a worktree. A model the server lists no name for is refused (a *ModelNotListedError): a
// server that lists its models answers a name it does not list with whatever it loaded
// (llama-server does), and the run, the ledger and status would carry the wrong name from then
// on. Only the operator may send it anyway (allow_unlisted_model). A server that lists no model
// says nothing either way: the run goes on, and its journal says the name went unchecked.
func (r *Run) ConnectChat(ctx context.Context) error {
	if err := r.Connect(); err != nil {
		return err
	}
	info, err := r.Client.Probe(ctx)
	if err != nil {
		return err
	}
	model := r.Spec.Model
	if model == "" {
		return nil
	}
	var notListed *ModelNotListedError
	if err := RequireListed(info, r.Client.BaseURL(), model); !errors.As(err, &notListed) {
		return err
	}
	switch {
	case len(notListed.Listed) == 0:
		r.Emit(ModelUncheckedEvent{Model: model, Listed: []string{}, Why: UncheckedListsNone})
	case r.Spec.Settings != nil && r.Spec.Settings.Bool(packs.AllowUnlisted):
		r.Emit(ModelUncheckedEvent{Model: model, Listed: notListed.Listed, Why: UncheckedAllowed})
	default:
		notListed.Refused = true
		return notListed
	}
	return nil
}
