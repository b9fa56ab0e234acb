package hookrun_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/hookrun"
	"github.com/wardenhq/warden/internal/localapi"
)

// jsonFields maps a struct type's JSON names to their field types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		out[f.Tag.Get("json")] = f.Type
	}
	return out
}

// TestWireMatchesLocalAPI: every field of the restated wire types is
// the admin API's, with the same JSON name and options and a type of
// the same shape; Decision is restated whole.
func TestWireMatchesLocalAPI(t *testing.T) {
	for _, c := range []struct {
		mine, theirs reflect.Type
		whole        bool
	}{
		{reflect.TypeFor[hookrun.Request](), reflect.TypeFor[localapi.ExternalRequest](), false},
		{reflect.TypeFor[hookrun.Event](), reflect.TypeFor[localapi.Event](), false},
		{reflect.TypeFor[hookrun.Decision](), reflect.TypeFor[localapi.Decision](), true},
	} {
		mine, theirs := jsonFields(c.mine), jsonFields(c.theirs)
		for tag, typ := range mine {
			tt, ok := theirs[tag]
			switch {
			case !ok:
				t.Errorf("%s has json %q; %s has no such field", c.mine, tag, c.theirs)
			case typ.Kind() != tt.Kind() || typ.Kind() != reflect.Pointer && typ.Kind() != reflect.Struct && typ != tt:
				t.Errorf("%s.%q is %s; %s's is %s", c.mine, tag, typ, c.theirs, tt)
			}
		}
		if c.whole && len(mine) != len(theirs) {
			t.Errorf("%s has %d fields, %s %d: restate it whole", c.mine, len(mine), c.theirs, len(theirs))
		}
	}
	for mine, theirs := range map[string]string{
		hookrun.SocketName: localapi.SocketName, hookrun.EventPending: localapi.EventPending, hookrun.EventDecision: localapi.EventDecision,
		hookrun.EventDenied: localapi.EventDenied, hookrun.EventError: localapi.EventError, hookrun.EventExit: localapi.EventExit,
	} {
		if mine != theirs {
			t.Errorf("constant %q; localapi's is %q", mine, theirs)
		}
	}
}

// TestRulesMatchGate: the restated rule ids are the gate's.
func TestRulesMatchGate(t *testing.T) {
	want := []string{gate.RuleHuman, gate.RuleToolAllow, gate.RuleGrantExact, gate.RuleGrantPrefix, gate.RuleGrantClass, gate.RuleDenyRule, gate.RuleHardline}
	if !slices.Equal(hookrun.RuleIDs, want) {
		t.Errorf("rules %q; the gate's are %q", hookrun.RuleIDs, want)
	}
}
