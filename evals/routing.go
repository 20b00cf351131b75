package evals

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// RoutingFile is where a workspace keeps its earned routing, relative to the root.
const RoutingFile = ".locum/routing.json"

// Routing is .locum/routing.json, as spec/routing.schema.json describes it.
type Routing struct {
	Version int `json:"version"`
	Record  struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
	} `json:"record"`
	Roles     map[string]RoutedRole `json:"roles"`
	Signer    string                `json:"signer"`
	Signature string                `json:"signature"`
}

// RoutedRole is one role's measured routing.
type RoutedRole struct {
	Enabled bool     `json:"enabled"`
	Model   string   `json:"model"`
	Effort  string   `json:"effort"`
	Tasks   []string `json:"tasks"`
	Reason  string   `json:"reason,omitempty"`
}

// Route is a role resolved to its measured model and effort, with the server's identity of the
// weights the record measured ("" where the server gave none).
type Route struct {
	Role, Model, Effort string
	Weights             string
}

// roleRefusal is the one-line refusal of a role, with what to do.
func roleRefusal(role, why string) error {
	command := fmt.Sprintf("locum roles accept %s MODEL", role)
	return &engine.RefusalError{Command: command, Reason: fmt.Sprintf("role %q has no earned routing: %s; the person accepts a model for it with: %s (it screens the model on the role's tasks first), or earns it with a signed A/B record (locum eval)", role, why, command)}
}

// ResolveRole returns the model and effort a role was measured with, only when a signed,
// trusted, unedited routing file enables it and the A/B record it came from is there unchanged.
// Every other case is a *engine.RefusalError saying why.
func ResolveRole(v *schema.Validator, root string, trust []string, role string, declared packs.Role) (Route, error) {
	return ResolveRoleTrusting(v, root, TrustedKeys{Keys: trust}, role, declared)
}

// ResolveRoleTrusting is ResolveRole with the trusted keys and where they come from.
func ResolveRoleTrusting(v *schema.Validator, root string, trust TrustedKeys, role string, declared packs.Role) (Route, error) {
	if _, err := os.Lstat(filepath.Join(root, RoutingFile)); errors.Is(err, fs.ErrNotExist) {
		return Route{}, roleRefusal(role, RoutingFile+" is missing")
	}
	data, err := untrusted.ReadFileIn(root, RoutingFile, untrusted.ConfigCap)
	if err != nil {
		return Route{}, roleRefusal(role, fmt.Sprintf("%s cannot be read: %v", RoutingFile, err))
	}
	// One decoding is checked and used: a second reading of the bytes could see other routes
	// than the ones the signature covers.
	doc, err := schema.Decode(RoutingFile, data)
	if err != nil {
		return Route{}, roleRefusal(role, err.Error())
	}
	obj, _ := doc.(map[string]any)
	if obj != nil {
		// The signature is judged before the shape: an unsigned or forged file says so plainly.
		if err := VerifyTrusting(obj, trust); err != nil {
			return Route{}, roleRefusal(role, RoutingFile+" cannot be trusted: "+err.Error())
		}
	}
	if err := v.ValidateValue(schema.Routing, RoutingFile, doc); err != nil {
		return Route{}, roleRefusal(role, "it does not fit spec/routing.schema.json: "+firstLine(err.Error()))
	}
	var r Routing
	if err := fromDoc(doc, &r); err != nil {
		return Route{}, roleRefusal(role, err.Error())
	}
	record, err := untrusted.ReadFileIn(root, filepath.FromSlash(r.Record.Path), maxRecordBytes)
	if err != nil {
		return Route{}, roleRefusal(role, fmt.Sprintf("the A/B record it came from, %s, cannot be read", r.Record.Path))
	}
	if sha256Hex(record) != r.Record.SHA256 {
		return Route{}, roleRefusal(role, fmt.Sprintf("the A/B record %s changed since the routing was signed", r.Record.Path))
	}
	rr, ok := r.Roles[role]
	switch {
	case !ok:
		return Route{}, roleRefusal(role, fmt.Sprintf("%s does not name it", RoutingFile))
	case !rr.Enabled:
		why := "the A/B record did not earn it"
		if rr.Reason != "" {
			why += " (" + rr.Reason + ")"
		}
		return Route{}, roleRefusal(role, fmt.Sprintf("%s says it is not enabled: %s", RoutingFile, why))
	case declared.Effort != "" && rr.Effort != declared.Effort:
		return Route{}, roleRefusal(role, fmt.Sprintf("it was measured at effort %s, but the pack runs it at %s", rr.Effort, declared.Effort))
	}
	if err := CheckEarns(record, append(append([]string(nil), rr.Tasks...), declared.Tasks...)); err != nil {
		return Route{}, roleRefusal(role, fmt.Sprintf("the A/B record %s cannot earn it: %v", r.Record.Path, err))
	}
	return Route{Role: role, Model: rr.Model, Effort: rr.Effort, Weights: recordWeights(record, rr.Model)}, nil
}

// recordWeights is the identity of model's weights an A/B record holds, or "".
func recordWeights(record []byte, model string) string {
	var r struct {
		Local struct {
			Digests map[string]string `json:"digests"`
		} `json:"local"`
	}
	if untrusted.Unmarshal(record, &r) != nil {
		return ""
	}
	return r.Local.Digests[model]
}

// maxRecordBytes bounds an A/B record read from a repository.
const maxRecordBytes = 16 << 20

// fromDoc turns an already decoded and checked document into v, so v holds exactly what was
// checked.
func fromDoc(doc any, v any) error {
	data, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// SignRouting signs r and writes it to root/.locum/routing.json.
func SignRouting(root string, r Routing, sign func(map[string]any) error) error {
	r.Signer, r.Signature = "", ""
	doc, err := toDoc(r)
	if err != nil {
		return err
	}
	delete(doc, "signer")
	delete(doc, "signature")
	if err := sign(doc); err != nil {
		return err
	}
	out, err := marshalIndent(doc)
	if err != nil {
		return err
	}
	// A committed link at .locum/routing.json (or .locum) must not aim the write elsewhere.
	file, err := untrusted.Confine(root, RoutingFile)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(file, out, 0o644)
}

// FileSHA256 is the lower-case hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
	data, err := untrusted.ReadFile(path, maxRecordBytes)
	if err != nil {
		return "", err
	}
	return sha256Hex(data), nil
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// WriteRouting derives the routing from a verified record and writes it signed.
func WriteRouting(root, name string, routes map[string]RoutedRole, sign func(map[string]any) error) error {
	data, err := untrusted.ReadFileIn(root, RecordPath(root, name), maxRecordBytes)
	if err != nil {
		return err
	}
	var r Routing
	r.Version = 1
	r.Record.Path = relTo(root, RecordPath(root, name))
	r.Record.SHA256 = sha256Hex(data)
	r.Roles = routes
	return SignRouting(root, r, sign)
}
