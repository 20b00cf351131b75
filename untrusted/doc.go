// Package untrusted reads and shows what locum does not trust: files under a repository (which
// whoever committed them may have written), standard input, and text from a model or a server.
//
// Every read is bounded and refuses anything but a regular file before it opens it, so a FIFO, a
// device or /dev/zero can neither block locum nor exhaust its memory. JSON is refused when an
// object names a key twice (or twice in different letter case, which encoding/json would merge),
// since two decoders of one document could otherwise see two different values. Text is escaped
// before it reaches a terminal, so it can neither forge a line nor drive the terminal.
//
// It imports nothing of locum's, so every other package may use it.
package untrusted
