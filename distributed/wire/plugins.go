package wire

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// EnvironPlugin is the name of the built-in worker plugin that sets
// environment variables; its configuration is a JSON object of names and
// values. The scheduler hands it to the nanny of a worker that has one
// (Nanny.Environ: the variables hold from the start of the worker process),
// and to the worker itself otherwise.
const EnvironPlugin = "shoal.environ"

// DecodeEnviron decodes and checks the configuration of the EnvironPlugin.
func DecodeEnviron(config []byte) (map[string]string, error) {
	var vars map[string]string
	if err := json.Unmarshal(config, &vars); err != nil {
		return nil, fmt.Errorf("environ: configuration: %w", err)
	}
	return vars, CheckEnviron(vars)
}

// CheckEnviron checks that vars can be environment variables: names are
// not empty and hold no '=' or NUL, values hold no NUL.
func CheckEnviron(vars map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("environ: bad variable name %q", k)
		}
		if strings.ContainsRune(vars[k], 0) {
			return fmt.Errorf("environ: the value of %s holds a NUL byte", k)
		}
	}
	return nil
}
