package shell

import "strings"

// Family archives: extracting writes into a directory (tar -C, unzip -d);
// creating reads whole trees (a home directory holds credentials); some
// options run programs (tar --to-command, -I, --checkpoint-action=exec).

var _ = family(func() {
	register("archives", ruleTar, "tar", "gtar", "bsdtar")
	register("archives", ruleUnzip, "unzip")
	register("archives", ruleZip, "zip", "7z", "7za", "7zz")
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
		// Old style: the first word is a bundle of option letters whose
		// values follow in order.
		opt := args[1]
		opt.Value = "-" + opt.Value
		args = append([]Arg{args[0], opt}, args[2:]...)
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
		c.tree(p.operands, accRead)
		c.reads(p.operands)
	}
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

// ruleZip: creating an archive reads its operands (-r as trees); the
// unzip command it may run to test is a program option.
func ruleZip(c *cmd) {
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
