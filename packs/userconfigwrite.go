package packs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// AcceptRole writes roles.ROLE into the operator's user config. RevokeRole removes it. Every
// other key of the file, hand-written ones included, is kept; the result must still fit
// spec/config.schema.json, and is written atomically with mode 0600.
func AcceptRole(v *schema.Validator, dirs UserDirs, role string, accepted AcceptedRole) error {
	return editUserConfig(v, dirs, func(doc map[string]any) error {
		roles, _ := doc["roles"].(map[string]any)
		if roles == nil {
			roles = map[string]any{}
		}
		entry, err := toDoc(accepted)
		if err != nil {
			return err
		}
		roles[role] = entry
		doc["roles"] = roles
		return nil
	})
}

// SetEndpoint writes endpoint.base_url into the operator's user config, keeping every other key
// of endpoint and of the file: the endpoint every repository's runs use unless a flag or the
// environment says otherwise.
func SetEndpoint(v *schema.Validator, dirs UserDirs, baseURL string) error {
	return editUserConfig(v, dirs, func(doc map[string]any) error {
		endpoint, _ := doc["endpoint"].(map[string]any)
		if endpoint == nil {
			endpoint = map[string]any{}
		}
		endpoint["base_url"] = baseURL
		doc["endpoint"] = endpoint
		return nil
	})
}

// ErrNotAccepted is RevokeRole's answer for a role the user config accepts no model for.
var ErrNotAccepted = errors.New("no model is accepted for this role in the user config")

// RevokeRole removes roles.ROLE from the operator's user config.
func RevokeRole(v *schema.Validator, dirs UserDirs, role string) error {
	return editUserConfig(v, dirs, func(doc map[string]any) error {
		roles, _ := doc["roles"].(map[string]any)
		if _, ok := roles[role]; !ok {
			return ErrNotAccepted
		}
		delete(roles, role)
		if len(roles) == 0 {
			delete(doc, "roles")
		}
		return nil
	})
}

// editUserConfig reads the user config as a document (a missing file is an empty one), lets
// edit change it, checks the result against the schema and writes it back atomically.
func editUserConfig(v *schema.Validator, dirs UserDirs, edit func(map[string]any) error) error {
	file := dirs.UserConfigFile()
	doc := map[string]any{}
	if _, err := os.Lstat(file); err == nil {
		data, err := untrusted.ReadFile(file, untrusted.ConfigCap)
		if err != nil {
			return fmt.Errorf("user config: %w", err)
		}
		parsed, err := v.Validate(schema.Config, file, data)
		if err != nil {
			return err
		}
		obj, ok := parsed.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: not a JSON object", file)
		}
		doc = obj
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("user config: %w", err)
	}
	if err := edit(doc); err != nil {
		return err
	}
	if err := v.ValidateValue(schema.Config, file, doc); err != nil {
		return err
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("user config: %w", err)
	}
	return atomicfile.Write(file, append(out, '\n'), 0o600)
}

// toDoc is v as the generic JSON a schema checks.
func toDoc(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc any
	err = json.Unmarshal(data, &doc)
	return doc, err
}
