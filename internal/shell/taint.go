package shell

import "strings"

// Secrets that travel. A secret the line reads can reach a sender by a
// detour: a variable (k=$(cat ~/.ssh/id_rsa); curl -d "$k"), a file it
// was copied or written to (cp ~/.ssh/id_rsa /tmp/k; curl -T /tmp/k), an
// archive (tar czf /tmp/k.tgz ~/.ssh), a descriptor opened on a socket, or
// the environment (env | curl -d @-). The walker remembers what holds a
// secret, and a sender given one of them exfiltrates it.

// taint remembers that key (a variable as "$NAME", or a resolved path)
// holds the secret what.
func (w *walker) taint(key, what string) {
	if w.tainted == nil {
		w.tainted = map[string]string{}
	}
	if _, ok := w.tainted[key]; !ok {
		w.tainted[key] = what
	}
}

// taintedPath reports the secret a path holds, if the line put one
// there.
func (w *walker) taintedPath(a Arg) (string, bool) {
	if len(w.tainted) == 0 || !a.Static {
		return "", false
	}
	what, ok := w.tainted[w.pathKey(a.Value)]
	return what, ok
}

// taintedVars reports a secret held by a variable a dynamic word expands.
func (w *walker) taintedVars(a Arg) (string, bool) {
	if len(w.tainted) == 0 || a.Static || !strings.Contains(a.Value, "$") {
		return "", false
	}
	for k, what := range w.tainted {
		if !strings.HasPrefix(k, "$") {
			continue
		}
		name := k[1:]
		for i := strings.Index(a.Value, "$"); i >= 0; {
			rest := a.Value[i+1:]
			rest = strings.TrimPrefix(rest, "{")
			if strings.HasPrefix(rest, name) && (len(rest) == len(name) || !isNameByte(rest[len(name)])) {
				return what, true
			}
			j := strings.Index(a.Value[i+1:], "$")
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	return "", false
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// secretIn returns the secret one of the candidates in [lo, hi) read.
func (w *walker) secretIn(lo, hi int) (string, bool) {
	for i := lo; i < hi && i < len(w.meta); i++ {
		if w.meta[i].secret != "" {
			return strings.TrimSuffix(w.meta[i].secret, " "), true
		}
	}
	return "", false
}

// taintAssign: NAME=$(… a secret …) puts the secret in NAME.
func (w *walker) taintAssign(name string, lo, hi int) {
	if what, ok := w.secretIn(lo, hi); ok {
		w.taint("$"+name, what)
	}
}

// envDumps are commands that print the whole environment when given no
// operands (an agent's environment holds its API keys).
var envDumps = map[string]bool{"env": true, "printenv": true, "export": true, "declare": true, "typeset": true, "set": true}

// markEnvDump notes a command that prints the environment: what it prints
// is a secret if it is sent (no finding by itself: env is everyday).
func (c *cmd) markEnvDump() {
	if !envDumps[c.name] {
		return
	}
	for _, a := range c.args[1:] {
		if !strings.HasPrefix(a.Value, "-") || a.Value == "-" {
			return // env CMD runs something; printenv NAME prints one
		}
	}
	if c.w.meta[c.idx].secret == "" {
		c.w.meta[c.idx].secret = "the environment "
	}
}

// readsTainted: a command that names a file the line put a secret in
// reads the secret.
func (c *cmd) readsTainted() {
	if len(c.w.tainted) == 0 {
		return
	}
	for _, a := range c.args[1:] {
		if what, ok := c.w.taintedPath(a); ok && c.w.meta[c.idx].secret == "" {
			c.w.meta[c.idx].secret = what + " "
		}
	}
	if c.in.kind == stdinFile {
		if what, ok := c.w.taintedPath(c.in.file); ok && c.w.meta[c.idx].secret == "" {
			c.w.meta[c.idx].secret = what + " "
		}
	}
}
