// Package rails holds the rails every locum mode runs under, each a small unit with its own tests.
// This file set starts with the shell rail: a command run in a process group of its own, so that
// stopping it stops everything it started.
package rails
