// Package shellstate gives each session of the terminal tool a shell that
// remembers: the working directory, exported variables, shell functions
// and aliases set by one call hold in the next call of the same session
// key, and in no other.
//
// Every call is a fresh shell. Before the command, a prologue generated
// by warden re-creates the saved state: `cd -- DIR`, `export NAME=VALUE`
// with values quoted by mvdan.cc/sh/v3/syntax.Quote, function
// definitions that were re-parsed and checked to be exactly one function
// of the expected name, and `alias NAME=VALUE`. After the command, an
// EXIT trap written only with shell builtins dumps the state as
// NUL-separated records (never shell text) to a file descriptor the
// host reads back; the host parses the records as data and never
// executes them. Nothing is ever grepped out of `export -p`, so a value
// holding newlines, quotes, `$(…)` or backticks round-trips as data (the
// reference's snapshot leak, hermes-approvals §6.3).
//
// Names that execenv.Never reports (session identity, approval markers,
// warden's own, shell internals) and credential-looking names the
// execenv table denies (unless the operator lists them in the
// passthrough) are dropped on capture and again on restore: the table in
// execenv is the one source of truth.
//
// Commands run with /bin/bash when it exists. Without bash they run
// with /bin/sh, and only the directory and exported variables persist:
// POSIX sh cannot list functions or aliases structurally.
//
// The state is the owner's, keyed by its session key and nothing else
// (never anything from the environment); it does not change who the
// owner is or what the gate decides, which happens before the call.
package shellstate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/wardenhq/warden/internal/execenv"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/tools"
)

// maxCapture bounds the state dump a call may produce, in bytes.
const maxCapture = 4 << 20

// State is one session's saved shell state.
type State struct {
	// Dir is the working directory, absolute; empty means the caller's.
	Dir string `json:"dir,omitempty"`
	// Origin is the directory the caller asked for on the call that
	// left Dir: a caller asking for another directory has moved, and
	// its request wins.
	Origin string `json:"origin,omitempty"`
	// Env holds exported variables that differ from the base
	// environment.
	Env map[string]string `json:"env,omitempty"`
	// Funcs holds function definitions as `declare -f` printed them.
	Funcs map[string]string `json:"functions,omitempty"`
	// Aliases holds alias values.
	Aliases map[string]string `json:"aliases,omitempty"`
}

// Options configure a Manager.
type Options struct {
	// Dir is where state files live (STATE/shellstate); created 0700.
	Dir string
	// Terminal is the base terminal: its Env is the environment every
	// call starts from and its Timeout bounds a call. Calls of owners
	// without a session key run through it unchanged.
	Terminal tools.Terminal
	// Bash is the shell that supports functions and aliases; empty means
	// /bin/bash when it exists. Set it to "-" to force the /bin/sh
	// fallback.
	Bash string
	// Passthrough lists credential-looking names the operator allows to
	// pass (tools.env_passthrough); only those may persist.
	Passthrough []string
	// Logger hears about dropped values.
	Logger *slog.Logger
}

// Manager runs terminal commands with per-session state. Calls of one
// session serialise; different sessions are independent.
type Manager struct {
	o     Options
	bash  string
	log   *slog.Logger
	base  map[string]string
	mu    sync.Mutex
	locks map[string]*sessionLock
}

// sessionLock serialises one session's calls; refs counts holders and
// waiters so the entry can be dropped when unused.
type sessionLock struct {
	mu   sync.Mutex
	refs int
}

// New returns a Manager, creating its directory.
func New(o Options) (*Manager, error) {
	if o.Dir == "" {
		return nil, errors.New("shellstate: no directory")
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("shellstate: %w", err)
	}
	if err := os.Chmod(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("shellstate: %w", err)
	}
	m := &Manager{o: o, log: o.Logger, locks: map[string]*sessionLock{}, base: map[string]string{}}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	m.log = m.log.With("component", "shellstate")
	switch o.Bash {
	case "-":
	case "":
		if fi, err := os.Stat("/bin/bash"); err == nil && !fi.IsDir() {
			m.bash = "/bin/bash"
		}
	default:
		m.bash = o.Bash
	}
	for _, kv := range o.Terminal.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m.base[k] = v
		}
	}
	return m, nil
}

// Bash reports whether functions and aliases persist (bash is used).
func (m *Manager) Bash() bool { return m.bash != "" }

// Path returns the state file of a session key.
func (m *Manager) Path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(m.o.Dir, hex.EncodeToString(sum[:])+".json")
}

// lock takes key's session lock and returns its release.
func (m *Manager) lock(key string) func() {
	m.mu.Lock()
	l := m.locks[key]
	if l == nil {
		l = &sessionLock{}
		m.locks[key] = l
	}
	l.refs++
	m.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		m.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(m.locks, key)
		}
		m.mu.Unlock()
	}
}

// Run runs command as the owner in ctx: with that owner's session state
// when it has a session key, through the base terminal otherwise. It
// has tools.Terminal's signature; callers that authorise first should
// use Begin, so the gate sees the directory the command really runs in.
func (m *Manager) Run(ctx context.Context, command, dir string, stdout, stderr io.Writer) (int, error) {
	o, _ := owner.From(ctx)
	key := o.SessionKey()
	if key == "" {
		return m.o.Terminal.Run(ctx, command, dir, stdout, stderr)
	}
	defer m.lock(key)()
	c := m.begin(ctx, key)
	return c.run(ctx, command, c.Dir(dir), stdout, stderr)
}

// Call is one call of a session. Begin reads the session's directory
// so the gate can be told where the command will run; Run then holds the
// session's lock while it restores, runs and saves, so calls of one
// session never interleave their state. The lock is not held while the
// gate decides or a human is asked: a session may have several
// questions pending at once.
type Call struct {
	m      *Manager
	key    string
	dir    string // the saved directory at Begin
	origin string // the saved origin at Begin
	asked  string // what the caller asked for (Dir's argument)
	// funcs and aliases are the session's at Begin: what Definitions
	// shows the gate is what Run restores.
	funcs, aliases map[string]string
}

// Begin starts a call of session key, reading its saved directory,
// functions and aliases.
func (m *Manager) Begin(ctx context.Context, key string) *Call {
	defer m.lock(key)()
	return m.begin(ctx, key)
}

// begin is Begin with key's lock held.
func (m *Manager) begin(ctx context.Context, key string) *Call {
	st, err := m.load(key)
	if err != nil {
		m.log.WarnContext(ctx, "state unreadable; starting afresh", "err", err)
	}
	return &Call{m: m, key: key, dir: st.Dir, origin: st.Origin, funcs: st.Funcs, aliases: st.Aliases}
}

// Definitions returns the shell text Run restores command's callable
// context with: all the session's functions (the analyser judges a
// body only where it is called) and the aliases command may expand
// (those whose names appear in it, in a function, or in another such
// alias; an alias definition is judged as it stands). It is "" when
// there are none. The runner has the gate decide it together with the
// command: a function defined in one call (a definition runs nothing,
// so it was judged safe) and called by name in the next must not escape
// analysis.
func (c *Call) Definitions(command string) string {
	if c.m.bash == "" || len(c.funcs)+len(c.aliases) == 0 {
		return ""
	}
	words := map[string]bool{}
	add := func(text string) {
		for _, w := range strings.FieldsFunc(text, func(r rune) bool {
			return r <= ' ' || strings.ContainsRune("\"'`$\\|&;()<>{}!#=", r)
		}) {
			words[w] = true
		}
	}
	add(command)
	for _, f := range c.funcs {
		add(f)
	}
	used := map[string]string{}
	for grew := true; grew; {
		grew = false
		for k, v := range c.aliases {
			if _, ok := used[k]; !ok && words[k] {
				used[k] = v
				add(v)
				grew = true
			}
		}
	}
	return c.m.definitions(context.Background(), State{Funcs: c.funcs, Aliases: used})
}

// End ends the call; it holds nothing, and is there for callers that
// pair it with Begin.
func (c *Call) End() {}

// Dir returns the directory the call runs in: the session's saved
// directory when it still exists and the caller asks for the same
// directory as on the call that left it (or for none), else requested.
// So `cd` holds from call to call, and a caller that moved (warden exec
// from another directory) starts where it is. Tell the gate this
// directory and pass it to Run.
func (c *Call) Dir(requested string) string {
	c.asked = requested
	if c.dir != "" && (requested == "" || requested == c.origin) {
		if fi, err := os.Stat(c.dir); err == nil && fi.IsDir() {
			return c.dir
		}
	}
	return requested
}

// Run runs command in dir (Dir's answer, which the gate was told: the
// command runs exactly there, even if another call of the session moved
// meanwhile) with the session's current variables, functions and
// aliases, then saves the state the command left. A command that fails
// still saves its state, as an interactive shell would keep it.
func (c *Call) Run(ctx context.Context, command, dir string, stdout, stderr io.Writer) (int, error) {
	defer c.m.lock(c.key)()
	return c.run(ctx, command, dir, stdout, stderr)
}

// run is Run with the session's lock held: variables from the current
// state, functions and aliases from Begin's.
func (c *Call) run(ctx context.Context, command, dir string, stdout, stderr io.Writer) (int, error) {
	m := c.m
	st, err := m.load(c.key)
	if err != nil {
		m.log.WarnContext(ctx, "state unreadable; starting afresh", "err", err)
		st = State{}
	}
	st.Funcs, st.Aliases = c.funcs, c.aliases
	script := m.prologue(ctx, st) + "\n" + command + "\n"
	code, capture, err := m.exec(ctx, script, dir, stdout, stderr)
	if err != nil || capture == nil {
		return code, err // no dump (killed, or the trap was replaced): keep the old state
	}
	next, err := m.parse(ctx, capture)
	if err != nil {
		m.log.WarnContext(ctx, "state dump unusable; state kept", "err", err)
		return code, nil
	}
	next.Origin = c.asked
	if err := m.save(c.key, next); err != nil {
		return code, fmt.Errorf("shellstate: %w", err)
	}
	return code, nil
}

// Load returns the saved state of key (the zero State if none).
func (m *Manager) Load(key string) (State, error) {
	defer m.lock(key)()
	return m.load(key)
}

// Reset drops key's state; a session without state is no error.
func (m *Manager) Reset(key string) error {
	defer m.lock(key)()
	if err := os.Remove(m.Path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("shellstate: reset: %w", err)
	}
	return nil
}

func (m *Manager) load(key string) (State, error) {
	var f stateFile
	b, err := os.ReadFile(m.Path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, nil
	}
	if err != nil {
		return State{}, fmt.Errorf("load state: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return State{}, fmt.Errorf("load state: %w", err)
	}
	return State{Dir: string(f.Dir), Origin: string(f.Origin), Env: fromBytes(f.Env), Funcs: fromBytes(f.Funcs), Aliases: fromBytes(f.Aliases)}, nil
}

// stateFile is a State on disk. Values are bytes (base64 in JSON), so a
// value that is not UTF-8 round-trips exactly; names are shell names.
type stateFile struct {
	Dir     []byte            `json:"dir,omitempty"`
	Origin  []byte            `json:"origin,omitempty"`
	Env     map[string][]byte `json:"env,omitempty"`
	Funcs   map[string][]byte `json:"functions,omitempty"`
	Aliases map[string][]byte `json:"aliases,omitempty"`
}

func toBytes(m map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

func fromBytes(m map[string][]byte) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// save writes st atomically (temp file, fsync, rename), mode 0600.
func (m *Manager) save(key string, st State) error {
	b, err := json.Marshal(stateFile{Dir: []byte(st.Dir), Origin: []byte(st.Origin), Env: toBytes(st.Env), Funcs: toBytes(st.Funcs), Aliases: toBytes(st.Aliases)})
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	f, err := os.CreateTemp(m.o.Dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if err := os.Rename(tmp, m.Path(key)); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	ok = true
	return nil
}

// keepVar reports whether an exported variable may be saved or restored.
func (m *Manager) keepVar(name string) bool {
	return validName(name) && execenv.Persist(name, m.o.Passthrough)
}

// validName reports a shell variable or alias-safe name.
func validName(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	for _, c := range []byte(name) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// reserved reports names a saved function or alias may not take: the
// builtins and keywords warden's prologue and capture trap rely on.
func reserved(name string) bool {
	switch name {
	case "alias", "builtin", "cd", "command", "compgen", "declare", "eval", "exec", "exit",
		"export", "local", "printf", "return", "set", "shopt", "source", "trap", "unalias",
		"unset", ".", "[", "[[", "if", "then", "fi", "for", "while", "do", "done", "case",
		"esac", "function", "in", "select", "until", "time", "coproc", "{", "}", "!":
		return true
	}
	return false
}

// funcName reports a function name warden restores: printable, no
// quoting or expansion characters, not reserved.
func funcName(name string) bool {
	if name == "" || reserved(name) || strings.HasPrefix(name, "-") {
		return false
	}
	for _, c := range []byte(name) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"'`$\\|&;()<>=*?[]{}!#~%", c) >= 0 {
			return false
		}
	}
	return true
}

// quote quotes v for bash, reporting whether it could.
func quote(v string) (string, bool) {
	q, err := syntax.Quote(v, syntax.LangBash)
	return q, err == nil
}

// prologue renders st as shell text: every value quoted, every function
// re-parsed and checked, never raw text from the dump.
func (m *Manager) prologue(ctx context.Context, st State) string {
	var b strings.Builder
	export := "export " // dash has no `builtin`
	if m.bash != "" {
		export = "builtin export "
	}
	for _, k := range slices.Sorted(maps.Keys(st.Env)) {
		if !m.keepVar(k) {
			continue
		}
		q, ok := quote(st.Env[k])
		if !ok {
			m.log.WarnContext(ctx, "variable value cannot be quoted; dropped", "name", k)
			continue
		}
		b.WriteString(export + k + "=" + q + "\n")
	}
	if m.bash != "" {
		b.WriteString("builtin shopt -s expand_aliases\n")
		b.WriteString(m.definitions(ctx, st))
		b.WriteString(bashTrap)
	} else {
		b.WriteString(shTrap)
	}
	return b.String()
}

// definitions renders st's functions (re-parsed, checked, printed back
// from the syntax tree) and aliases (quoted) as bash text.
func (m *Manager) definitions(ctx context.Context, st State) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(st.Funcs)) {
		if text, ok := checkFunc(k, st.Funcs[k]); ok {
			b.WriteString(text + "\n")
		} else {
			m.log.WarnContext(ctx, "function definition rejected", "name", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(st.Aliases)) {
		q, ok := quote(st.Aliases[k])
		if !funcName(k) || !ok {
			m.log.WarnContext(ctx, "alias rejected", "name", k)
			continue
		}
		b.WriteString("alias " + k + "=" + q + "\n") // no function may be named alias
	}
	return b.String()
}

// checkFunc re-parses a saved definition and accepts it only if it is
// exactly one function declaration named name; it returns the text
// printed back from the syntax tree.
func checkFunc(name, text string) (string, bool) {
	if !funcName(name) {
		return "", false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil || len(f.Stmts) != 1 {
		return "", false
	}
	s := f.Stmts[0]
	fd, ok := s.Cmd.(*syntax.FuncDecl)
	if !ok || fd.Name == nil || fd.Name.Value != name || s.Negated || s.Background || s.Coprocess || len(s.Redirs) > 0 {
		return "", false
	}
	var out bytes.Buffer
	if err := syntax.NewPrinter().Print(&out, s); err != nil {
		return "", false
	}
	return out.String(), true
}

// bashTrap dumps the state at exit with builtins only, to fd 3, as
// NUL-terminated records: "D" dir; "E" NAME=VALUE; "F" NAME then the
// `declare -f` text; "A" NAME then the value. The exit status is kept.
const bashTrap = `builtin trap '__warden_rc=$?
builtin set +eu -f
IFS=$'"'"'\n'"'"'
{ builtin printf "D%s\0" "$PWD"
for __warden_n in $(builtin compgen -e); do builtin printf "E%s=%s\0" "$__warden_n" "${!__warden_n}"; done
for __warden_n in $(builtin compgen -A function); do builtin printf "F%s\0" "$__warden_n"; builtin declare -f -- "$__warden_n"; builtin printf "\0"; done
for __warden_n in "${!BASH_ALIASES[@]}"; do builtin printf "A%s\0%s\0" "$__warden_n" "${BASH_ALIASES[$__warden_n]}"; done
builtin printf "Z\0"; } >&3 2>/dev/null
builtin exit "$__warden_rc"' EXIT
`

// shTrap is the /bin/sh fallback: "D" dir, then `env -0`'s records
// as they are, then "Z".
const shTrap = `trap '__warden_rc=$?
{ printf "D%s\\000" "$PWD"; command -p env -0; printf "Z\\000"; } >&3 2>/dev/null
exit "$__warden_rc"' EXIT
`

// parse reads a dump as data into a State, dropping what must never
// persist and variables equal to the base environment.
func (m *Manager) parse(ctx context.Context, dump []byte) (State, error) {
	recs := bytes.Split(dump, []byte{0})
	if len(recs) < 2 || string(recs[len(recs)-2]) != "Z" {
		return State{}, errors.New("state dump incomplete")
	}
	recs = recs[:len(recs)-2]
	st := State{Env: map[string]string{}, Funcs: map[string]string{}, Aliases: map[string]string{}}
	for i := 0; i < len(recs); i++ {
		r := string(recs[i])
		if r == "" {
			continue
		}
		tag, rest := r[0], r[1:]
		if m.bash == "" && i > 0 {
			tag, rest = 'E', r // the sh dump: env -0 records between D and Z
		}
		switch tag {
		case 'D':
			if filepath.IsAbs(rest) {
				st.Dir = rest
			}
		case 'E':
			k, v, ok := strings.Cut(rest, "=")
			if !ok || !m.keepVar(k) {
				continue
			}
			if bv, inBase := m.base[k]; inBase && bv == v {
				continue
			}
			st.Env[k] = v
		case 'F', 'A':
			if i+1 >= len(recs) {
				return State{}, errors.New("state dump truncated")
			}
			i++
			v := string(recs[i])
			if tag == 'F' {
				if _, ok := checkFunc(rest, v); ok {
					st.Funcs[rest] = v
				} else {
					m.log.WarnContext(ctx, "function not kept", "name", rest)
				}
			} else if funcName(rest) {
				st.Aliases[rest] = v
			}
		}
	}
	return st, nil
}

// exec runs script in a fresh shell with the base environment and fd 3
// open on a capture file, in the base terminal's sandbox, and returns
// the exit code and the capture (nil when empty: the trap did not run).
func (m *Manager) exec(ctx context.Context, script, dir string, stdout, stderr io.Writer) (int, []byte, error) {
	capf, err := os.CreateTemp(m.o.Dir, ".cap-*")
	if err != nil {
		return -1, nil, fmt.Errorf("shellstate: %w", err)
	}
	defer func() { _ = os.Remove(capf.Name()) }()
	defer func() { _ = capf.Close() }()
	sh := m.bash
	if sh == "" {
		sh = "/bin/sh"
	}
	term := m.o.Terminal
	term.Shell = sh
	res, err := term.Exec(ctx, script, dir, []*os.File{capf}, stdout, stderr)
	code := res.Code
	if err != nil || res.Signaled {
		return code, nil, err // killed: no dump to trust
	}
	if _, err := capf.Seek(0, io.SeekStart); err != nil {
		return code, nil, fmt.Errorf("shellstate: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(capf, maxCapture+1))
	if err != nil {
		return code, nil, fmt.Errorf("shellstate: read state dump: %w", err)
	}
	if len(b) == 0 || len(b) > maxCapture {
		return code, nil, nil
	}
	return code, b, nil
}
