package shell

import "sort"

// program is a program the analyser knows: its family (for people) and
// its rule.
type program struct {
	family string
	rule   func(*cmd)
}

// programs maps a command name (see cmdName) to its rule. It is filled
// from the family files by register, once; docs/analysis.md lists it
// (TestDocsCatalogue).
var programs = map[string]*program{}

// register adds programs to a family with one rule.
func register(family string, rule func(*cmd), names ...string) {
	for _, n := range names {
		if _, dup := programs[n]; dup {
			panic("shell: program registered twice: " + n)
		}
		programs[n] = &program{family: family, rule: rule}
	}
}

func init() {
	for name := range launchers {
		if name == "ssh" {
			register("launchers", ruleSSH, name)
			continue
		}
		register("launchers", ruleLaunch, name)
	}
	register("launchers", ruleEnv, "env")
	register("launchers", ruleSu, "su", "runuser")
	register("launchers", ruleBusybox, "busybox", "toybox")
	register("launchers", ruleParallel, "parallel", "sem")
	register("launchers", ruleFind, "find")
	for s := range shells {
		register("code", ruleShell, s)
	}
	for n := range interpreters {
		register("code", ruleInterp, n)
	}
	register("code", ruleEval, "eval")
	register("code", ruleTrap, "trap")
	register("code", ruleSource, "source", ".")
	register("code", ruleAlias, "alias")
	register("code", ruleAwk, "awk", "gawk", "mawk", "nawk", "busybox-awk")
	register("state", ruleCd, "cd", "pushd", "popd")
	registerFamilies()
}

// familyInits register the family files' programs (package variables,
// so they are all in place before init runs registerFamilies).
var familyInits []func()

// family adds a family's registration.
func family(f func()) bool {
	familyInits = append(familyInits, f)
	return true
}

func registerFamilies() {
	for _, f := range familyInits {
		f()
	}
}

// FamilyPrograms returns, per family, the programs the analyser has rules
// for, sorted (for docs and --catalogue).
func FamilyPrograms() map[string][]string {
	out := map[string][]string{}
	for n, p := range programs {
		out[p.family] = append(out[p.family], n)
	}
	for _, l := range out {
		sort.Strings(l)
	}
	return out
}
