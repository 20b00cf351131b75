package main

import (
	"context"
	"errors"

	"github.com/locumdev/locum/verify"
)

func (e *env) verifyOffline(ctx context.Context) error {
	report, err := verify.Offline(ctx, e.stdout)
	if err != nil {
		return withCode(exitCouldNot, err)
	}
	if code := report.ExitCode(); code != 0 {
		return withCode(code, errors.New(""))
	}
	return nil
}
