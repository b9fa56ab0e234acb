package cli

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestHookLocationsIgnoreEnvironment: the variables an agent's settings
// can give the hook's environment change nothing about where warden
// hook finds its config and state.
func TestHookLocationsIgnoreEnvironment(t *testing.T) {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil {
		t.Fatalf("password database: %v", err)
	}
	evil := t.TempDir()
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "WARDEN_STATE", "XDG_CACHE_HOME"} {
		t.Setenv(k, evil)
	}
	state, cfg, paths, err := hookLocations(hookOptions{}, passwdHome)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Clean(u.HomeDir)
	if state != filepath.Join(home, ".local", "state", "warden") || cfg != filepath.Join(home, ".config", "warden", "config.yaml") || paths.Home != home {
		t.Errorf("state %q, config %q, home %q: want under %q (from the password database)", state, cfg, paths.Home, home)
	}
	for _, p := range append(paths.Protected, state, cfg) {
		if strings.HasPrefix(p, evil) {
			t.Errorf("%q comes from the environment", p)
		}
	}
	if !slices.Contains(paths.Protected, state) || !slices.Contains(paths.Protected, filepath.Dir(cfg)) {
		t.Errorf("own paths not protected: %q", paths.Protected)
	}
}

func TestHookLocationsFlags(t *testing.T) {
	state, cfg, _, err := hookLocations(hookOptions{state: "/srv/w", config: "/etc/w.yaml"}, func() (string, error) { return "", errors.New("no passwd entry") })
	if err != nil || state != "/srv/w" || cfg != "/etc/w.yaml" {
		t.Errorf("flags: %q %q %v", state, cfg, err)
	}
	if _, _, _, err := hookLocations(hookOptions{}, func() (string, error) { return "", errors.New("no passwd entry") }); err == nil {
		t.Error("no home and no flags must fail (the hook then denies)")
	}
}
