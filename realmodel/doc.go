// Package realmodel is the real-model tier: tests of the locum binary against llama.cpp's
// llama-server serving a real coding model, both installed by scripts/real-model-setup. Its
// tests build only with -tags realmodel; the hermetic suite replays recorded replies instead.
package realmodel
