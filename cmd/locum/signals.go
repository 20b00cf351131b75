package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/locumdev/locum/runner/client"
)

// signalContext is cancelled, with the signal as its cause, by SIGINT, SIGTERM or SIGHUP. Later
// signals are caught too, so a second Ctrl-C cannot cut a restore short.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(&client.SignalError{Signal: s})
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(ch)
		cancel(nil)
	}
}
