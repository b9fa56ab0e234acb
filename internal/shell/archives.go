package shell

import "strings"

// Family archives: extracting writes into a directory (tar -C, unzip -d);
// creating reads whole trees (a home directory holds credentials); some
// options run programs (tar --to-command, -I, --checkpoint-action=exec).

var _ = family(func() {
	register("archives", ruleTar, "tar", "gtar", "bsdtar")
	register("archives", ruleUnzip, "unzip")
	register("archives", ruleZip, "zip", "7z", "7za", "7zz")
	register("archives", ruleCpio, "cpio")
})

var tarSpec = spec("", "A|catenate|concatenate", "c|create", "d|diff|compare", "delete", "r|append", "t|list", "test-label", "u|update",
	"x|extract|get", "C|directory=", "f|file=", "T|files-from=", "X|exclude-from=", "exclude=", "I|use-compress-program=",
	"to-command=", "info-script|new-volume-script|F=", "rsh-command=", "checkpoint?", "checkpoint-action=", "transform|xform=",
	"b|blocking-factor=", "H|format=", "K|starting-file=", "L|tape-length=", "N|newer|after-date=", "newer-mtime=", "g|listed-incremental=",
	"V|label=", "owner=", "group=", "mode=", "mtime=", "strip-components=", "suffix=", "backup?", "index-file=", "volno-file=", "record-size=",
	"level=", "occurrence?", "sort=", "quoting-style=", "warning=", "owner-map=", "group-map=", "hole-detection=", "atime-preserve?",
	"v|verbose", "z|gzip|gunzip|ungzip", "j|bzip2", "J|xz", "Z|compress|uncompress", "a|auto-compress", "lzip", "lzma", "lzop", "zstd",
	"p|preserve-permissions|same-permissions", "P|absolute-names", "k|keep-old-files", "keep-newer-files", "overwrite", "overwrite-dir",
	"unlink-first|U", "recursive-unlink", "remove-files", "W|verify", "h|dereference", "hard-dereference", "l|check-links",
	"m|touch", "o", "O|to-stdout", "S|sparse", "s|preserve-order|same-order", "w|interactive|confirmation", "B|read-full-records",
	"G|incremental", "i|ignore-zeros", "M|multi-volume", "R|block-number", "totals?", "show-transformed-names", "show-stored-names",
	"no-recursion", "recursion", "one-file-system", "null", "no-null", "wildcards", "no-wildcards", "anchored", "no-anchored",
	"ignore-case", "no-ignore-case", "exclude-vcs", "exclude-vcs-ignores", "exclude-backups", "exclude-caches", "numeric-owner",
	"same-owner", "no-same-owner", "no-same-permissions", "delay-directory-restore", "force-local", "full-time", "utc", "xattrs",
	"no-xattrs", "acls", "no-acls", "selinux", "no-selinux", "seek", "no-seek", "skip-old-files", "posix", "restrict",
	"help", "usage", "version", "?|help")

// ruleTar: options may be written the old way (tar czf FILE DIR);
// extraction writes into -C's directory; creation reads its operands as
// trees; program options run programs.
func ruleTar(c *cmd) {
	args := c.args
	if len(args) > 1 && args[1].Static && !strings.HasPrefix(args[1].Value, "-") && isTarKeys(args[1].Value) {
		// Old style: the first word is a bundle of option letters, and
		// the letters that take a value take the next words, in order
		// (tar xzfC x.tgz DIR is -x -z -f x.tgz -C DIR).
		keys := args[1]
		out := []Arg{args[0]}
		next := 2
		for i := 0; i < len(keys.Value); i++ {
			k := keys.Value[i]
			opt := keys
			opt.Value, opt.off = "-"+string(k), 0
			out = append(out, opt)
			if id := tarSpec.data().short[k]; id > 0 && tarSpec.data().defs[id-1].arg == argRequired && next < len(args) {
				out = append(out, args[next])
				next++
			}
		}
		args = append(out, args[next:]...)
	}
	saved := c.args
	c.args = args
	defer func() { c.args = saved }()
	p := c.parse(tarSpec)
	for _, v := range p.values("to-command", "I", "F", "rsh-command") {
		c.programOption(v, "tar option")
	}
	for _, v := range p.values("checkpoint-action") {
		if after, ok := strings.CutPrefix(v.Value, "exec="); ok {
			c.programOption(sub(v, len(v.Value)-len(after)), "tar --checkpoint-action")
		}
	}
	switch {
	case p.has("x"):
		dir := Arg{Value: ".", Static: true, Span: c.span}
		if d, ok := p.value("C"); ok {
			dir = d
		}
		c.writes([]Arg{dir})
		c.tree([]Arg{dir}, accWrite)
		if p.has("P") {
			c.opaqueDetail(c.span, "tar -P extracts to the absolute paths the archive names")
		}
	case p.has("c", "r", "u", "A"):
		c.writes(p.values("f"))
		ops := append(p.operands, inDirs(p.values("C"), p.operands)...)
		c.tree(ops, accRead)
		c.reads(ops)
		if secret := c.w.meta[c.idx].secret; secret != "" {
			for _, f := range p.values("f") {
				if f.Static && f.Value != "-" {
					c.w.taint(c.w.pathKey(f.Value), strings.TrimSuffix(secret, " "))
				}
			}
		}
	}
}

// inDirs is each relative operand joined to each directory of -C: tar
// -C ~/.config -c warden reads ~/.config/warden. (tar applies each -C to
// the operands after it; every pairing over-approximates that.)
func inDirs(dirs, operands []Arg) []Arg {
	var out []Arg
	for _, d := range dirs {
		for _, o := range operands {
			if strings.HasPrefix(o.Value, "/") || strings.HasPrefix(o.Value, "~") || strings.HasPrefix(o.Value, "-") {
				continue
			}
			j := o
			j.Value = strings.TrimSuffix(d.Value, "/") + "/" + o.Value
			j.Static = d.Static && o.Static
			j.Glob = d.Glob || o.Glob
			out = append(out, j)
		}
	}
	return out
}

// isTarKeys reports an old-style tar key bundle (cvzf, xf, tf).
func isTarKeys(s string) bool {
	if s == "" || !strings.ContainsAny(s, "cxtruAd") {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("AcdrtuxCfTXIbHKLNgVvzjJZapPkUWhlmoOSsiGMRwB", r) {
			return false
		}
	}
	return true
}

var unzipSpec = spec("", "d=", "x=", "P=", "Z", "c", "f", "l", "p", "t", "T", "u", "v", "z", "a", "b", "B", "C", "D", "j", "K", "L", "M", "n", "N", "o", "q", "s", "U", "V", "W", "X", "Y", "h", "hh")

// ruleUnzip: extraction writes into -d's directory (or here).
func ruleUnzip(c *cmd) {
	p := c.parse(unzipSpec)
	if p.has("l", "t", "v", "z", "Z", "p", "c") {
		return
	}
	dir := Arg{Value: ".", Static: true, Span: c.span}
	if d, ok := p.value("d"); ok {
		dir = d
	}
	c.writes([]Arg{dir})
	c.tree([]Arg{dir}, accWrite)
}

// rule7z: 7z x|e ARCHIVE -oDIR extracts into DIR (here without -o);
// its switches are attached (-oDIR, -pPASS, -r).
func rule7z(c *cmd) {
	var ops []Arg
	var out *Arg
	for _, a := range c.args[1:] {
		switch {
		case strings.HasPrefix(a.Value, "-o") && len(a.Value) > 2:
			d := sub(a, 2)
			out = &d
		case !strings.HasPrefix(a.Value, "-"):
			ops = append(ops, a)
		}
	}
	if len(ops) == 0 {
		return
	}
	switch ops[0].Value {
	case "x", "e":
		dir := Arg{Value: ".", Static: true, Span: c.span}
		if out != nil {
			dir = *out
		}
		c.writes([]Arg{dir})
		c.tree([]Arg{dir}, accWrite)
	case "a", "u":
		if len(ops) > 2 {
			c.writes(ops[1:2])
			c.tree(ops[2:], accRead)
			c.reads(ops[2:])
		}
	}
}

var cpioSpec = spec("", "i|extract", "o|create", "p|pass-through", "D|directory=", "F|file=", "E|pattern-file=", "H|format=", "I=", "O=",
	"d|make-directories", "m|preserve-modification-time", "u|unconditional", "v|verbose", "V|dot", "t|list", "R|owner=", "to-stdout",
	"no-absolute-filenames", "absolute-filenames", "a|reset-access-time", "b|swap", "B", "c", "C|io-size=", "f|nonmatching",
	"l|link", "L|dereference", "n|numeric-uid-gid", "no-preserve-owner", "only-verify-crc", "quiet", "r|rename", "s|swap-bytes",
	"S|swap-halfwords", "sparse", "M|message=", "rsh-command=", "block-size=", "W|warning=", "0|null", "A|append", "help", "version")

// ruleCpio: -i extracts into -D's directory (or here); -p copies into
// its operand directory; an archive may hold absolute names.
func ruleCpio(c *cmd) {
	p := c.parse(cpioSpec)
	var dir Arg
	switch {
	case p.has("t"):
		return
	case p.has("i"):
		dir = Arg{Value: ".", Static: true, Span: c.span}
		if d, ok := p.value("D"); ok {
			dir = d
		}
		if p.has("absolute-filenames") {
			c.opaqueDetail(c.span, "cpio --absolute-filenames extracts to the absolute paths the archive names")
		}
	case p.has("p") && len(p.operands) > 0:
		dir = p.operands[0]
	default:
		return
	}
	c.writes([]Arg{dir})
	c.tree([]Arg{dir}, accWrite)
	for _, v := range p.values("rsh-command") {
		c.programOption(v, "cpio --rsh-command")
	}
}

// ruleZip: creating an archive reads its operands (-r as trees); the
// unzip command it may run to test is a program option.
func ruleZip(c *cmd) {
	if strings.HasPrefix(c.name, "7z") {
		rule7z(c)
		return
	}
	for i := 1; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case (a.Value == "-TT" || a.Value == "--unzip-command") && i+1 < len(c.args):
			c.programOption(c.args[i+1], "zip -TT")
		case strings.HasPrefix(a.Value, "--unzip-command="):
			c.programOption(sub(a, len("--unzip-command=")), "zip -TT")
		case strings.HasPrefix(a.Value, "-TT") && len(a.Value) > 3:
			c.programOption(sub(a, 3), "zip -TT")
		}
	}
	var ops []Arg
	for _, a := range c.args[1:] {
		if !strings.HasPrefix(a.Value, "-") {
			ops = append(ops, a)
		}
	}
	if len(ops) > 1 {
		c.writes(ops[:1])
		c.tree(ops[1:], accRead)
	}
}
