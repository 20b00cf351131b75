package cost

// StandingBytes is what being installed costs a host on every turn of every session, delegating
// or not: the bytes of locum mcp's tools/list result (the tools' names, descriptions, annotations
// and input schemas, as JSON) and of its instructions, as a host receives them from a server in a
// repository with no ledger yet. A host keeps both in its context and reads them again on each
// turn, at the cached-input price. Each mode and role a ledger holds adds its break-even line to
// the instructions, so a repository with history costs somewhat more.
//
// It is a constant so that packages below mcp can charge it without building a server; mcp's
// TestStandingBytesIsMeasured holds it to the measured size.
const StandingBytes = 11628

// SkillBytes is the delegate-local skill as locum init installs it: a host that loads it keeps it
// in its context from then on. SkillIndexBytes is the part a host keeps on every turn whether it
// loads the skill or not: its name and description, which Claude Code lists among its skills.
// packs' TestSkillWithinBudget holds both to the measured sizes.
const (
	SkillBytes      = 4991
	SkillIndexBytes = 245
)
