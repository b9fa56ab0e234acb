package shell

import (
	"regexp"
	"strings"
	"sync"
)

// Family env: variables that load code into what runs (LD_PRELOAD,
// PYTHONPATH, NODE_OPTIONS, BASH_ENV), name programs to run (GIT_SSH,
// PAGER, EDITOR), inject git configuration (GIT_CONFIG_COUNT/KEY_n/
// VALUE_n, GIT_CONFIG_PARAMETERS), or redirect a container client.

// assignFindings judges NAME=VALUE set for a command or exported.
func (w *walker) assignFindings(idx int, name, val string, sp Span, via []string) {
	if strings.HasPrefix(strings.TrimSpace(val), "() {") {
		// A function exported through the environment; a bash that
		// imports it (and, unpatched, runs what follows it).
		w.findDetail(idx, clsEnvLoader, sp, name+" holds a function")
		w.dynamicPayload("f"+strings.TrimSpace(val), appendVia(via, name+"= (function)"), sp, stdin{})
	}
	switch name {
	case "PYTHONPATH", "NODE_PATH", "PERL5LIB", "PERLLIB", "RUBYLIB":
		// Project-relative module paths (PYTHONPATH=src pytest) are how
		// tests are run; absolute or dynamic ones can plant code.
		if !relativePaths(val) {
			w.find(idx, clsEnvLoader, sp)
		}
	case "NODE_OPTIONS":
		if nodeLoads().MatchString(val) {
			w.find(idx, clsEnvLoader, sp)
		}
	case "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH",
		"PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "RUBYOPT", "BASH_ENV", "ENV", "PROMPT_COMMAND", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
		"GCONV_PATH", "PYTHONINSPECT", "LUA_INIT", "ZDOTDIR", "NODE_REPL_EXTERNAL_MODULE", "JDK_JAVA_OPTIONS", "PS4", "GIT_EXEC_PATH",
		"GIT_TEMPLATE_DIR", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG", "GIT_DIR", "SUDO_ASKPASS":
		w.findDetail(idx, clsEnvLoader, sp, name)
		if name == "PROMPT_COMMAND" || name == "PS4" {
			w.dynamicPayload(val, appendVia(via, name+"="), sp, stdin{})
		}
	case "DOCKER_HOST", "CONTAINER_HOST", "DOCKER_CONTEXT":
		w.find(idx, clsContainerDaemon, sp)
	case "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "LESSOPEN", "LESSCLOSE", "GIT_PROXY_COMMAND",
		"GIT_SEQUENCE_EDITOR", "RSYNC_RSH", "CVS_RSH", "BROWSER", "GIT_PAGER_IN_USE", "MANOPT":
		if name == "GIT_PAGER_IN_USE" || name == "MANOPT" {
			return
		}
		w.findDetail(idx, clsProgramOption, sp, name)
		prog := strings.TrimLeft(val, "|")
		w.payload(strings.ReplaceAll(prog, "%s", "f"), appendVia(via, name+"="), sp, -1, stdin{})
	case "PAGER", "GIT_PAGER", "MANPAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "SYSTEMD_PAGER", "SYSTEMD_EDITOR", "SUDO_EDITOR", "FCEDIT", "MYSQL_PS1":
		if strings.ContainsAny(val, " ;|&$`<>()") {
			w.findDetail(idx, clsProgramOption, sp, name)
			w.payload(val, appendVia(via, name+"="), sp, -1, stdin{})
		}
	case "GIT_CONFIG_PARAMETERS":
		w.findDetail(idx, clsGitConfigProgram, sp, name)
	case "HISTFILE", "HISTSIZE", "HISTFILESIZE":
		if val == "" || val == "0" || val == "/dev/null" {
			w.findDetail(idx, clsHistoryErase, sp, name+"="+val)
		}
	case "PATH":
		if val == "" {
			return
		}
		// A temporary or relative directory first on PATH lets whatever
		// is written there run instead of the system's programs.
		for _, p := range strings.Split(val, ":") {
			if p == "$PATH" || p == "${PATH}" {
				break
			}
			if p == "" || p == "." || isTemp(p+"/x") || strings.HasPrefix(p, "/tmp") || strings.HasPrefix(p, "/dev/shm") {
				w.findDetail(idx, clsEnvLoader, sp, "PATH starts with "+p)
				break
			}
		}
	default:
		if strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") || name == "GIT_CONFIG_COUNT" {
			w.gitEnvConfig(idx, sp, via)
		}
	}
}

// gitEnvConfig judges git configuration injected through the environment
// (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n) of one
// candidate: the keys and values are read together.
func (w *walker) gitEnvConfig(idx int, sp Span, via []string) {
	var assigns []string
	if idx >= 0 && idx < len(w.a.Commands) {
		assigns = w.a.Commands[idx].Assigns
	}
	keys := map[string]string{}
	vals := map[string]string{}
	for _, as := range assigns {
		n, v, _ := strings.Cut(as, "=")
		switch {
		case strings.HasPrefix(n, "GIT_CONFIG_KEY_"):
			keys[n[len("GIT_CONFIG_KEY_"):]] = v
		case strings.HasPrefix(n, "GIT_CONFIG_VALUE_"):
			vals[n[len("GIT_CONFIG_VALUE_"):]] = v
		}
	}
	if len(keys) == 0 {
		// Only some of the variables are here (exported earlier): what
		// git is told to run cannot be read.
		w.findDetail(idx, clsGitConfigProgram, sp, "git configuration from GIT_CONFIG_* variables")
		return
	}
	c := w.newCmd()
	defer w.freeCmd(c)
	*c = cmd{w: w, idx: idx, via: via, span: sp}
	for n, k := range keys {
		c.gitConfig(Arg{Value: k + "=" + vals[n], Static: true, Span: sp}, "GIT_CONFIG_KEY_"+n)
	}
}

// nodeLoads matches NODE_OPTIONS that load code or open a debugger.
var nodeLoads = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|\s)(-r|--require|--import|--loader|--experimental-loader|--inspect[a-z-]*)(\s|=|$)`)
})

// relativePaths reports a colon-separated list of project-relative
// paths: no absolute, home, parent or dynamic entries.
func relativePaths(v string) bool {
	if v == "" {
		return false
	}
	for _, p := range strings.Split(v, ":") {
		if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.ContainsAny(p, "$`") || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") {
			return false
		}
	}
	return true
}
