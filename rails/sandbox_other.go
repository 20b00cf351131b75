//go:build unix && !linux

package rails

import "syscall"

// verifyCgroup is a cgroup of a command's own; only Linux has them.
type verifyCgroup struct{}

var newCgroup = func(string) *verifyCgroup { return nil }

func (g *verifyCgroup) place(*syscall.SysProcAttr) {}
func (g *verifyCgroup) kill()                      {}

func killOrphanCgroups() {}

// birthTime is when the file at path was made; only Linux's statx says it.
func birthTime(string) string { return "" }
