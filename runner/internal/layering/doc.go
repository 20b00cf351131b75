// Package layering holds the test that keeps the runner packages' imports flowing one way: the
// client below the engine, the engine below the modes, and no mode importing another. It has no
// code of its own.
package layering
