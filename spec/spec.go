// Package spec holds locum's contracts as data: the JSON schemas every manifest, workspace and
// result is checked against. The schemas are the source of truth; Go types elsewhere follow them.
package spec

import "embed"

//go:generate go run ../internal/gen/packschema

// FS holds every *.schema.json file, addressed by its base name.
//
//go:embed *.schema.json
var FS embed.FS

// Contract versions of the pack manifest that this build understands. Contract 1.0 is Portulan's;
// 1.1 adds contributes.modes and contributes.roles; 1.2 adds contributes.workflows.
const (
	PackContractPortulan  = "1.0"
	PackContractModes     = "1.1"
	PackContractWorkflows = "1.2"
	PackContractLatest    = PackContractWorkflows
)
