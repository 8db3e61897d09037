package flagfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/spf13/pflag"
)

// Load applies the config file explicit (--config), else the first of
// DefaultPaths that exists, to the flags of flags that were not set (Apply).
// An explicit file that cannot be read, or a file that is not a config,
// is a usage error; no default file is no config.
func Load(flags *pflag.FlagSet, known map[string]bool, explicit string, getenv func(string) string) error {
	path, required := explicit, explicit != ""
	if path == "" {
		path = defaultPath(getenv)
	}
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !required && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fail.Usagef("cannot read config file: %v", err)
	}
	if err := Apply(flags, known, path, data); err != nil {
		return fail.Usagef("%v", err)
	}
	return nil
}

// defaultPath is the first config file that exists of
// $XDG_CONFIG_HOME/lohibot-audit/config.yaml (else
// $HOME/.config/lohibot-audit/config.yaml) and
// /etc/lohibot-audit/config.yaml; "" when none does.
func defaultPath(getenv func(string) string) string {
	var candidates []string
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		candidates = append(candidates, filepath.Join(x, "lohibot-audit", "config.yaml"))
	} else if h := getenv("HOME"); h != "" {
		candidates = append(candidates, filepath.Join(h, ".config", "lohibot-audit", "config.yaml"))
	}
	candidates = append(candidates, "/etc/lohibot-audit/config.yaml")
	for _, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}
