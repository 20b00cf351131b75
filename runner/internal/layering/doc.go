// Package layering holds the tests that keep the tree's layers apart: imports flow one way (the
// client below the engine, the engine below the modes, no mode importing another, the model
// choice and the job layer importing no mode, the front ends on top), no layer above a mode
// decides anything by comparing the mode's name, and nothing outside a server's dialect file in
// runner/client compares a server's kind. It has no code of its own.
package layering
