// Package layering holds the tests that keep the tree's layers apart: imports flow one way (the
// client below the engine, the engine below the modes, no mode importing another, the model
// choice and the job layer importing no mode, the front ends on top), and no layer above a mode
// decides anything by comparing the mode's name. It has no code of its own.
package layering
