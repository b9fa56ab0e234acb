package hookrun

import (
	"reflect"
	"testing"

	"github.com/wardenhq/warden/internal/gate"
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
		{reflect.TypeFor[Request](), reflect.TypeFor[localapi.ExternalRequest](), false},
		{reflect.TypeFor[Event](), reflect.TypeFor[localapi.Event](), false},
		{reflect.TypeFor[Decision](), reflect.TypeFor[localapi.Decision](), true},
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
		SocketName: localapi.SocketName, EventPending: localapi.EventPending, EventDecision: localapi.EventDecision,
		EventDenied: localapi.EventDenied, EventError: localapi.EventError, EventExit: localapi.EventExit,
	} {
		if mine != theirs {
			t.Errorf("constant %q; localapi's is %q", mine, theirs)
		}
	}
}

// TestRulesMatchGate: the restated rule ids are the gate's.
func TestRulesMatchGate(t *testing.T) {
	for mine, theirs := range map[string]string{
		ruleHuman: gate.RuleHuman, ruleToolAllow: gate.RuleToolAllow, ruleGrantExact: gate.RuleGrantExact,
		ruleGrantPrefix: gate.RuleGrantPrefix, ruleGrantClass: gate.RuleGrantClass, ruleDenyRule: gate.RuleDenyRule, ruleHardline: gate.RuleHardline,
	} {
		if mine != theirs {
			t.Errorf("rule %q; the gate's is %q", mine, theirs)
		}
	}
}
