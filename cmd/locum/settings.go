package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
)

// settingFlags declares the flags of a mode's settings. Values stay text here: the one resolver
// in package packs checks them, so a bad value is refused the same way whether it came from a
// flag, the environment or a file. Each shows the default the mode gets from locum's own pack.
func settingFlags(mode string, skip ...string) []cli.Flag {
	defaults, err := packs.BuiltinDefaults(mode)
	if err != nil {
		// The default pack is embedded and its tests resolve every mode's settings from it.
		panic(fmt.Sprintf("locum: %v", err))
	}
	return declareFlags(packs.SettingFlags(mode), defaults, skip...)
}

// declareFlags declares the flags of settings, each with the setting's own words (settingOf
// knows a setting's flag by them), its group and its default: defaults[key] where given, else the
// table's.
func declareFlags(specs []packs.FlagSpec, defaults map[string]string, skip ...string) []cli.Flag {
	var out []cli.Flag
	for _, f := range specs {
		if slices.Contains(skip, f.Name) {
			continue
		}
		def, ok := defaults[f.Key]
		if !ok {
			def = f.Default
		}
		group := string(f.Group)
		if f.Bool {
			// A switch is off unless given; only one on by default would say so.
			if def == "false" {
				def = ""
			}
			out = append(out, &cli.BoolFlag{Name: f.Name, Usage: f.Doc, Category: group, DefaultText: def})
			continue
		}
		// A number flag is typed, so --help shows it as one and a value that is not one is a
		// usage error; the resolver still checks its range, the same for a flag, env or file.
		switch f.Number {
		case "int":
			out = append(out, &cli.IntFlag{Name: f.Name, Usage: f.Doc, Category: group, DefaultText: def, HideDefault: def == ""})
		case "float":
			out = append(out, &cli.FloatFlag{Name: f.Name, Usage: f.Doc, Category: group, DefaultText: def, HideDefault: def == ""})
		default:
			out = append(out, &cli.StringFlag{Name: f.Name, Usage: f.Doc, Category: group, DefaultText: def})
		}
	}
	return out
}

// setFlags collects the setting flags of a mode the user gave.
func setFlags(cmd *cli.Command, mode string) map[string]string {
	return givenFlags(cmd, packs.SettingFlags(mode))
}

func givenFlags(cmd *cli.Command, specs []packs.FlagSpec) map[string]string {
	out := map[string]string{}
	for _, f := range specs {
		if !cmd.IsSet(f.Name) {
			continue
		}
		switch {
		case f.Bool:
			out[f.Name] = strconv.FormatBool(cmd.Bool(f.Name))
		case f.Number == "int":
			out[f.Name] = strconv.Itoa(cmd.Int(f.Name))
		case f.Number == "float":
			out[f.Name] = strconv.FormatFloat(cmd.Float(f.Name), 'f', -1, 64)
		default:
			out[f.Name] = cmd.String(f.Name)
		}
	}
	return out
}

// resolve gives a mode's settings their values from every source, the flags of cmd last; a value
// that does not parse is exit 2.
func (e *env) resolve(cmd *cli.Command, c *packs.Composition, mode string) (*packs.Settings, error) {
	s, err := c.Resolve(mode, e.lookup, setFlags(cmd, mode))
	if err != nil {
		return nil, withCode(exitCouldNot, fmt.Errorf("locum %s: %w", cmd.Name, err))
	}
	return s, nil
}

// localFlags keeps a command's flags to the command itself: urfave/cli hands a parent's flags to
// its subcommands, so without this `eval keygen` would list and accept every flag of `eval` and
// ignore them.
func localFlags(flags []cli.Flag) []cli.Flag {
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			f.Local = true
		case *cli.BoolFlag:
			f.Local = true
		case *cli.IntFlag:
			f.Local = true
		case *cli.FloatFlag:
			f.Local = true
		case *cli.DurationFlag:
			f.Local = true
		case *cli.StringSliceFlag:
			f.Local = true
		default:
			panic(fmt.Sprintf("localFlags: add %T", f))
		}
	}
	return flags
}

var invalidFlagValue = regexp.MustCompile(`^invalid value "(.*)" for flag -([A-Za-z0-9-]+): `)

// flagError words urfave/cli's message for a setting flag whose value does not parse the way the
// resolver words the same mistake made in the environment or a file.
func flagError(err error) error {
	m := invalidFlagValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	if serr := packs.CheckFlag(m[2], m[1]); serr != nil {
		return serr
	}
	return err
}
