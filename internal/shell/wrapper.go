package shell

import (
	"slices"
	"strings"
)

// Unknown wrappers. A program the analyser does not know may run its
// operands (a site's own run-as-root script, ansible's -a, pdsh): `foo rm
// -rf ~` may delete the home directory, and nothing in the catalogue says
// it will not. When the operands of an unknown program have the shape of a
// hardline command for a catalogued program — as an argv (`foo rm -rf ~`)
// or as one word of shell code (`foo 'rm -rf ~'`) — the line is
// exec.unknown_wrapper: opaque, so no bypass or grant lets it through and
// a human sees it. Programs whose operands are data (echo, grep, man,
// logger, a commit message) are never read this way.

var clsUnknownWrapper = opaque("exec", "exec.unknown_wrapper", TierDangerous,
	"a program warden does not know is given a hardline command as its operands (it may run it)")

// dataPrograms are programs outside the registry whose operands are
// names or text, never a command they run.
var dataPrograms = map[string]bool{"apropos": true, "whatis": true, "whereis": true, "info": true, "logger": true, "notify-send": true,
	"wall": true, "write": true, "say": true, "espeak": true, "cowsay": true, "figlet": true, "toilet": true, "banner": true,
	"zenity": true, "kdialog": true, "yes": true, "complete": true, "compgen": true, "cheat": true, "pgrep": true, "pidof": true,
	"apt-cache": true, "apt-file": true, "dpkg-query": true, "plocate": true, "mlocate": true, "fzf": true, "go": true, "java": true,
	"javac": true, "gcc": true, "cc": true, "clang": true, "rustc": true, "tput": true, "stty": true, "getent": true, "let": true,
	"read": true, "printenv": true, "numfmt": true, "units": true, "cal": true, "ncal": true, "lolcat": true, "gum": true,
	"dialog": true, "whiptail": true, "xmessage": true, "osd_cat": true, "spd-say": true, "festival": true, "pbcopy": true,
	"xclip": true, "xsel": true, "wl-copy": true, "clip": true}

// textOptions are option names whose value is text (a message, a
// title): a word after one is not read as code.
var textOptions = map[string]bool{"m": true, "message": true, "msg": true, "t": true, "title": true, "s": true, "subject": true,
	"b": true, "body": true, "d": true, "description": true, "comment": true, "n": true, "note": true, "summary": true, "text": true,
	"reason": true, "l": true, "label": true, "F": true, "file": true, "name": true, "q": true, "query": true, "p": true, "prompt": true}

// maxWrapperProbes bounds how many operand positions of one unknown
// program are tried.
const maxWrapperProbes = 6

// unknownWrapper tries the operands of a program the analyser does not
// know as the command it may run.
func (c *cmd) unknownWrapper() {
	w := c.w
	if w.probing || len(c.args) < 2 || dataPrograms[c.name] || knownSafe[c.name] {
		return
	}
	tries := 0
	for i := 1; i < len(c.args) && tries < maxWrapperProbes; i++ {
		a := c.args[i]
		if !a.Static || a.Value == "" {
			continue
		}
		prev := c.args[i-1].Value
		switch {
		case a.Value[0] != '-' && i+1 < len(c.args) && programs[cmdName(a.Value)] != nil && !strings.ContainsAny(a.Value, " \t\n"):
			// A bare name (last reboot, apropos shutdown) is a name, not
			// a command: the command has arguments.
			tries++
			c.probeWrapped(c.args[i:], "")
		case strings.ContainsAny(a.Value, " \t\n") && !(strings.HasPrefix(prev, "-") && textOptions[strings.TrimLeft(strings.SplitN(prev, "=", 2)[0], "-")]):
			first, _, _ := strings.Cut(strings.TrimLeft(a.Value, " \t\n"), " ")
			if programs[cmdName(first)] == nil {
				continue
			}
			tries++
			c.probeWrapped(nil, a.Value)
		}
	}
}

// probeWrapped analyses args (or, when code is set, shell code) as what
// an unknown program may run, on the side: nothing it finds is kept but
// a hardline finding, which becomes exec.unknown_wrapper on c.
func (c *cmd) probeWrapped(args []Arg, code string) {
	w := c.w
	if w.probes >= maxProbes || w.err != nil {
		return
	}
	w.probes++
	nc, nf, nm := len(w.a.Commands), len(w.a.Findings), len(w.meta)
	dir, stack, dyn := w.dir, slices.Clone(w.dirStack), w.a.Dynamic
	w.probing = true
	via := appendVia(c.via, c.name+" (if it runs its operands)")
	if code != "" {
		w.dynamicPayload(code, via, c.span, stdin{})
	} else {
		w.exec(args, via, nil, stdin{}, c.span)
	}
	w.probing = false
	var hard []Finding
	for _, f := range w.a.Findings[nf:] {
		if f.Tier == TierHardline {
			hard = append(hard, f)
		}
	}
	clear(w.a.Commands[nc:])
	w.a.Commands = w.a.Commands[:nc]
	clear(w.meta[nm:])
	w.meta = w.meta[:nm]
	w.a.Findings = w.a.Findings[:nf]
	w.dir, w.dirStack, w.a.Dynamic = dir, stack, dyn
	if w.err != nil {
		w.err = nil // a probe that fails to read proves nothing
	}
	if len(hard) > 0 {
		what := code
		if what == "" {
			what = strings.Join(words(args), " ")
		}
		c.findDetail(clsUnknownWrapper, c.span, "if "+c.name+" runs "+quoteShort(what)+": "+hard[0].Class)
	}
}

func quoteShort(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return "'" + s + "'"
}
