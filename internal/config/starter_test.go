package config

import (
	"reflect"
	"testing"
)

// TestStarterIsDefaults: the file config init writes sets exactly the
// defaults, parses without a warning, and so can never loosen policy.
func TestStarterIsDefaults(t *testing.T) {
	cfg, warnings, err := Parse(Starter, "starter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	def := Default()
	cfg.Name, cfg.Digest, def.Digest = "", "", ""
	if !reflect.DeepEqual(cfg, def) {
		t.Errorf("starter config differs from the defaults:\n got %+v\nwant %+v", cfg, def)
	}
}
