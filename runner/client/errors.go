package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/untrusted"
)

// HTTPError is a server that answered with an HTTP error status.
type HTTPError struct {
	Method, URL string
	Status      int
	Message     string // the server's own error message, when it gave one
	// TryBaseURL is the endpoint to try instead, when locum can tell (a path without /v1).
	TryBaseURL string
}

func (e *HTTPError) Error() string { return e.Words(rails.FlagName) }

// Words is the message with the settings its hint names named by name.
func (e *HTTPError) Words(name func(string) string) string {
	msg := fmt.Sprintf("the server answered HTTP %d to %s %s", e.Status, e.Method, e.URL)
	if e.Message != "" {
		// One line, whatever the server put in it.
		msg += ": " + untrusted.Escape(e.Message)
	}
	if e.TryBaseURL != "" {
		msg += fmt.Sprintf("; the OpenAI API usually lives under /v1: try %s %s", name("base_url"), e.TryBaseURL)
	}
	return msg
}

// UnreachableError is no server answering at the endpoint.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string { return e.Words(rails.FlagName) }

// Words is the message with the endpoint setting named by name.
func (e *UnreachableError) Words(name func(string) string) string {
	return fmt.Sprintf("no server answers at %s (%v); start one (%s) or point %s at it", e.URL, rootCause(e.Err), strings.Join(StartCommands(e.URL), ", or "), name("base_url"))
}

// StartCommands names what starts the server that usually listens on the endpoint's port, or
// each server's command when the port is no server's own.
func StartCommands(endpoint string) []string {
	port := ""
	if u, err := url.Parse(endpoint); err == nil {
		port = u.Port()
	}
	switch port {
	case "11434":
		return []string{"ollama serve"}
	case "8080":
		return []string{"llama-server -m MODEL.gguf"}
	case "1234":
		return []string{"lms server start"}
	case "8000":
		return []string{"vllm serve MODEL", "python -m llama_cpp.server --model MODEL.gguf"}
	}
	return []string{"lms server start", "ollama serve", "llama-server -m MODEL.gguf"}
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// RedirectError is a server that answered with a redirect. locum never follows one: the next hop
// could be anywhere.
type RedirectError struct {
	From, To string
}

func (e *RedirectError) Error() string { return e.Words(rails.FlagName) }

// Words is the message with the endpoint setting named by name.
func (e *RedirectError) Words(name func(string) string) string {
	return fmt.Sprintf("the server at %s redirected to %s; locum does not follow redirects (point %s at the real endpoint)", e.From, e.To, name("base_url"))
}

// TooLargeError is a response body over the cap.
type TooLargeError struct {
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the server's response is over %d bytes; locum stopped reading it", e.Limit)
}

// TimeoutError is a request that ran out of time.
type TimeoutError struct {
	What  string // the setting that ran out: "timeout" or "first_token_timeout"; or probeLimit
	After time.Duration
}

func (e *TimeoutError) Error() string { return e.Words(rails.FlagName) }

// Words is the message with the deadline's setting named by name.
func (e *TimeoutError) Words(name func(string) string) string {
	if e.What == probeLimit {
		return fmt.Sprintf("the server did not list its models within %s (%s, not %s); it may be loading a model or stuck: check it, then retry", e.After, e.What, name("timeout"))
	}
	setting := name(e.What)
	if e.What == "first_token_timeout" {
		return fmt.Sprintf("no first token within %s (%s): the server may be dead, or the prefill longer than allowed; raise %s or check the server", e.After, setting, setting)
	}
	return fmt.Sprintf("no complete reply within %s (%s); raise %s for a slow model, or narrow the input", e.After, setting, setting)
}

var errFirstToken = errors.New("first token timeout")

// transportError turns what the HTTP stack returned into one of the errors above.
func (c *Client) transportError(err error, method, target string) error {
	if err == nil {
		return nil
	}
	var off *rails.OffLoopbackError
	if errors.As(err, &off) {
		return off
	}
	var redirect *RedirectError
	if errors.As(err, &redirect) {
		return redirect
	}
	var tooLarge *TooLargeError
	if errors.As(err, &tooLarge) {
		return tooLarge
	}
	var httpErr *HTTPError
	if errors.As(err, &httpErr) {
		return httpErr
	}
	var sig *SignalError
	if errors.As(err, &sig) {
		return sig
	}
	switch {
	case errors.Is(err, errFirstToken):
		return &TimeoutError{What: "first_token_timeout", After: c.cfg.FirstTokenTimeout}
	case errors.Is(err, context.DeadlineExceeded):
		return &TimeoutError{What: "timeout", After: c.cfg.Timeout}
	case errors.Is(err, context.Canceled):
		return err
	case isUnreachable(err):
		return &UnreachableError{URL: c.cfg.BaseURL.String(), Err: err}
	}
	return fmt.Errorf("%s %s: %w", method, target, err)
}

func isUnreachable(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

func rootCause(err error) error {
	for {
		var ue *url.Error
		var op *net.OpError
		switch {
		case errors.As(err, &op) && op.Err != nil:
			err = op.Err
			if se, ok := err.(interface{ Unwrap() error }); ok && se.Unwrap() != nil {
				err = se.Unwrap()
			}
			return err
		case errors.As(err, &ue):
			err = ue.Err
		default:
			return err
		}
	}
}

// Count writes n with the noun in the number it takes: "1 file", "2 files", "0 files".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// SignalError is a run stopped by a signal.
type SignalError struct{ Signal os.Signal }

func (e *SignalError) Error() string { return "stopped by " + signalName(e.Signal) }

func signalName(s os.Signal) string {
	switch s.String() {
	case "interrupt":
		return "SIGINT"
	case "terminated":
		return "SIGTERM"
	case "hangup":
		return "SIGHUP"
	}
	return s.String()
}

// Plural is one or many as n takes it: the noun alone, where Count writes the number too.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
