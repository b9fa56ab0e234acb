package shell

import (
	"net/url"
	"path"
	"strings"
)

// Family network: fetchers (what they download and where they write it),
// uploads (local files sent to a remote host: dangerous; a credential
// file: hardline), reverse shells, metadata endpoints, firewalls.

var _ = family(func() {
	register("network", ruleCurl, "curl", "curlie")
	register("network", ruleWget, "wget", "wget2")
	register("network", ruleNet, "http", "https", "xh", "xhs", "httpie", "aria2c", "lynx", "w3m", "links", "fetch", "tftp", "ftp",
		"dig", "nslookup", "host", "ping", "whois", "openssl")
	register("network", ruleNetcat, "nc", "ncat", "netcat", "socat", "telnet")
	register("network", ruleSCP, "scp", "sftp")
	register("network", ruleRsync, "rsync")
	register("network", ruleFirewall, "iptables", "ip6tables", "nft", "ufw", "iptables-legacy", "iptables-nft", "firewall-cmd", "pfctl")
	register("network", ruleCloudCopy, "mail", "mailx", "mutt", "sendmail")
})

// fetchers download content from the network.
var fetchers = map[string]bool{"curl": true, "wget": true, "fetch": true, "aria2c": true, "http": true, "https": true, "xh": true, "xhs": true,
	"httpie": true, "lynx": true, "links": true, "w3m": true, "nc": true, "ncat": true, "netcat": true, "socat": true, "telnet": true,
	"tftp": true, "iwr": true, "irm": true, "invoke-webrequest": true, "invoke-restmethod": true, "wget2": true, "curlie": true, "ftp": true}

// senders send what they are given to another host: a secret reaching one
// (piped in, or substituted into an argument) is exfiltrated.
var senders = map[string]bool{"curl": true, "wget": true, "http": true, "https": true, "xh": true, "xhs": true, "httpie": true,
	"curlie": true, "wget2": true, "nc": true, "ncat": true, "netcat": true, "socat": true, "telnet": true, "ssh": true, "scp": true,
	"sftp": true, "rsync": true, "ftp": true, "tftp": true, "mail": true, "mailx": true, "mutt": true, "sendmail": true, "dig": true,
	"nslookup": true, "host": true, "ping": true, "whois": true, "openssl": true, "gh": true, "aws": true, "gsutil": true,
	"rclone": true, "aria2c": true, "iwr": true, "irm": true, "invoke-webrequest": true, "invoke-restmethod": true}

var curlSpec = spec("n", "A|user-agent=", "b|cookie=", "c|cookie-jar=", "C|continue-at=", "d|data=", "data-ascii=", "data-binary=",
	"data-raw=", "data-urlencode=", "D|dump-header=", "e|referer=", "E|cert=", "F|form=", "form-string=", "H|header=", "K|config=",
	"m|max-time=", "o|output=", "output-dir=", "P|ftp-port=", "Q|quote=", "r|range=", "T|upload-file=", "t|telnet-option=",
	"u|user=", "U|proxy-user=", "w|write-out=", "x|proxy=", "X|request=", "y|speed-time=", "Y|speed-limit=", "z|time-cond=",
	"json=", "url=", "url-query=", "variable=", "abstract-unix-socket=", "alt-svc=", "aws-sigv4=", "cacert=", "capath=", "cert-type=",
	"ciphers=", "connect-timeout=", "connect-to=", "create-file-mode=", "crlfile=", "curves=", "delegation=", "dns-interface=",
	"dns-ipv4-addr=", "dns-ipv6-addr=", "dns-servers=", "doh-url=", "ech=", "egd-file=", "engine=", "etag-compare=", "etag-save=",
	"expect100-timeout=", "ftp-account=", "ftp-alternative-to-user=", "ftp-method=", "ftp-ssl-ccc-mode=", "happy-eyeballs-timeout-ms=",
	"haproxy-clientip=", "hostpubmd5=", "hostpubsha256=", "hsts=", "interface=", "ip-tos=", "ipfs-gateway=", "keepalive-time=",
	"keepalive-cnt=", "key=", "key-type=", "krb=", "libcurl=", "limit-rate=", "local-port=", "login-options=", "mail-auth=", "mail-from=",
	"mail-rcpt=", "max-filesize=", "max-redirs=", "netrc-file=", "noproxy=", "oauth2-bearer=", "parallel-max=", "pass=",
	"pinnedpubkey=", "preproxy=", "proto=", "proto-default=", "proto-redir=", "proxy-cacert=", "proxy-capath=", "proxy-cert=",
	"proxy-cert-type=", "proxy-ciphers=", "proxy-crlfile=", "proxy-header=", "proxy-key=", "proxy-key-type=", "proxy-pass=",
	"proxy-pinnedpubkey=", "proxy-service-name=", "proxy-tls13-ciphers=", "proxy-tlsauthtype=", "proxy-tlspassword=", "proxy-tlsuser=",
	"proxy1.0=", "pubkey=", "random-file=", "rate=", "request-target=", "resolve=", "retry=", "retry-delay=", "retry-max-time=",
	"sasl-authzid=", "service-name=", "socks4=", "socks4a=", "socks5=", "socks5-gssapi-service=", "socks5-hostname=", "stderr=",
	"tftp-blksize=", "tls-max=", "tls13-ciphers=", "tlsauthtype=", "tlspassword=", "tlsuser=", "trace=", "trace-ascii=", "trace-config=",
	"unix-socket=", "vlan-priority=", "sigalgs=", "write-out=",
	"0|http1.0", "1|tlsv1", "2|sslv2", "3|sslv3", "4|ipv4", "6|ipv6", "a|append", "B|use-ascii", "f|fail", "fail-with-body", "g|globoff",
	"G|get", "h|help?", "i|include", "I|head", "j|junk-session-cookies", "J|remote-header-name", "k|insecure", "l|list-only",
	"L|location", "location-trusted", "M|manual", "n|netrc", "netrc-optional", "N|buffer", "O|remote-name", "remote-name-all",
	"p|proxytunnel", "q|disable", "R|remote-time", "s|silent", "S|show-error", "v|verbose", "V|version", "Z|parallel", "#|progress-bar",
	"compressed", "create-dirs", "http1.1", "http2", "http2-prior-knowledge", "http3", "http3-only", "no-progress-meter", "progress-meter",
	"retry-all-errors", "retry-connrefused", "ssl", "ssl-reqd", "tcp-nodelay", "tcp-fastopen", "digest", "basic", "ntlm", "negotiate",
	"anyauth", "raw", "styled-output", "xattr", "path-as-is", "post301", "post302", "post303", "disallow-username-in-url", "skip-existing",
	"parallel-immediate", "fail-early", "ftp-create-dirs", "ftp-pasv", "ftp-skip-pasv-ip", "ftp-pret", "ftp-ssl-control", "ftp-ssl-ccc",
	"crlf", "doh-insecure", "false-start", "ssl-allow-beast", "ssl-no-revoke", "ssl-revoke-best-effort", "ssl-auto-client-cert",
	"tlsv1.0", "tlsv1.1", "tlsv1.2", "tlsv1.3", "sessionid", "keepalive", "buffer", "alpn", "npn", "epsv", "eprt", "trace-ids",
	"trace-time", "suppress-connect-headers", "show-headers", "ca-native", "proxy-ca-native", "insecure", "proxy-insecure", "ignore-content-length")

// ruleCurl: -o/-O and friends write files; -T, --data @FILE, -F x=@FILE
// upload them; URLs may reach a metadata endpoint.
func ruleCurl(c *cmd) {
	p := c.parse(curlSpec)
	c.metadata()
	c.writes(p.values("o", "D", "c", "trace", "trace-ascii", "stderr", "libcurl", "etag-save"))
	if p.has("O", "remote-name-all") {
		dir := "."
		if d, ok := p.value("output-dir"); ok {
			dir = d.Value
		}
		for _, u := range p.operands {
			if base := urlBase(u.Value); base != "" {
				c.writes([]Arg{{Value: dir + "/" + base, Static: u.Static, Span: u.Span}})
			}
		}
	}
	files := p.values("T")
	for _, v := range p.values("d", "data-ascii", "data-binary", "json") {
		if strings.HasPrefix(v.Value, "@") {
			files = append(files, sub(v, 1))
		}
	}
	for _, v := range p.values("data-urlencode") {
		if i := strings.IndexByte(v.Value, '@'); i >= 0 && !strings.Contains(v.Value[:i], "=") {
			files = append(files, sub(v, i+1))
		}
	}
	for _, v := range p.values("F") {
		if _, val, ok := strings.Cut(v.Value, "="); ok && (strings.HasPrefix(val, "@") || strings.HasPrefix(val, "<")) {
			f := sub(v, len(v.Value)-len(val)+1)
			f.Value, _, _ = strings.Cut(f.Value, ";")
			files = append(files, f)
		}
	}
	c.uploadFiles(files)
}

// urlBase is the file name a URL would be saved under by curl -O.
func urlBase(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Path == "" || strings.HasSuffix(u.Path, "/") {
		return ""
	}
	return path.Base(u.Path)
}

// uploadFiles judges local files sent to a remote host: an upload, and a
// credential one is exfiltration ("-" is stdin, judged by the pipeline).
func (c *cmd) uploadFiles(files []Arg) {
	for _, f := range files {
		if f.Value == "-" || f.Value == "." {
			c.w.meta[c.idx].sends = true
			c.findDetail(clsUpload, f.Span, "standard input")
			// curl -T - < FILE sends FILE. Not again for a redirect that
			// itself reads as standard input (ssh < . would recurse).
			if in := c.in.file; c.in.kind == stdinFile && in.Value != "-" && in.Value != "." {
				c.uploadFiles([]Arg{in})
			}
			continue
		}
		if what, ok := c.w.taintedPath(f); ok {
			c.findDetail(clsExfilSecret, f.Span, what)
			continue
		}
		cls, tier, d := c.w.argClass(f, accRead)
		switch {
		case isSecretRead(cls):
			c.w.findTier(c.idx, cls, tier, f.Span, d)
			c.findDetail(clsExfilSecret, f.Span, d)
		case cls == clsWardenSelf:
			c.w.findTier(c.idx, clsWardenSelf, tier, f.Span, d)
			c.findDetail(clsExfilSecret, f.Span, d)
		default:
			detail := f.Value
			if r, ok := c.w.resolvePath(f); ok {
				detail = r
			}
			c.findDetail(clsUpload, f.Span, detail)
			c.w.exfilTree(c, f)
		}
	}
}

// exfilTree: uploading a directory that holds credentials sends them.
func (w *walker) exfilTree(c *cmd, f Arg) {
	if p, ok := w.argPath(f); ok {
		if cls, _, d := w.treeClass(p, accRead); isSecretRead(cls) || cls == clsWardenSelf {
			c.findDetail(clsExfilSecret, f.Span, d)
		}
	}
}

// metadata flags any argument naming a cloud metadata endpoint.
func (c *cmd) metadata() {
	for _, a := range c.args[1:] {
		if hasMetadataHost(a.Value) {
			c.find(clsMetadata, a.Span)
			return
		}
	}
}

var wgetSpec = spec("n", "O|output-document=", "P|directory-prefix=", "o|output-file=", "a|append-output=", "post-file=", "body-file=",
	"post-data=", "body-data=", "method=", "i|input-file=", "e|execute=", "use-askpass=", "B|base=", "t|tries=", "T|timeout=", "w|wait=",
	"Q|quota=", "l|level=", "A|accept=", "R|reject=", "D|domains=", "exclude-domains=", "I|include-directories=", "X|exclude-directories=",
	"U|user-agent=", "header=", "user=", "password=", "http-user=", "http-password=", "ftp-user=", "ftp-password=", "proxy-user=",
	"proxy-password=", "load-cookies=", "save-cookies=", "certificate=", "private-key=", "ca-certificate=", "ca-directory=", "limit-rate=",
	"bind-address=", "dns-timeout=", "connect-timeout=", "read-timeout=", "waitretry=", "random-wait", "referer=", "config=",
	"cut-dirs=", "restrict-file-names=", "default-page=", "E|adjust-extension", "report-speed=", "rejected-log=", "hsts-file=",
	"c|continue", "N|timestamping", "q|quiet", "v|verbose", "nv|no-verbose", "d|debug", "S|server-response", "spider",
	"r|recursive", "k|convert-links", "K|backup-converted", "m|mirror", "p|page-requisites", "x|force-directories",
	"nd|no-directories", "nH|no-host-directories", "np|no-parent", "H|span-hosts", "L|relative", "b|background", "F|force-html",
	"h|help", "V|version", "4|inet4-only", "6|inet6-only", "no-check-certificate", "content-disposition", "trust-server-names",
	"ask-password", "auth-no-challenge", "no-clobber", "nc", "https-only", "retry-connrefused", "unlink", "delete-after",
	"progress=", "show-progress", "no-cache", "no-cookies", "keep-session-cookies", "ignore-length", "compression=")

// ruleWget: -O/-P write, --post-file/--body-file upload, --use-askpass and
// -e run programs.
func ruleWget(c *cmd) {
	p := c.parse(wgetSpec)
	c.metadata()
	for _, o := range p.values("O") {
		if o.Value != "-" {
			c.writes([]Arg{o})
		}
	}
	c.writes(p.values("o", "a", "save-cookies"))
	dir := ""
	if d, ok := p.value("P"); ok {
		c.writes([]Arg{d})
		dir = d.Value + "/"
	}
	if _, ok := p.value("O"); !ok && !p.has("spider", "r", "m", "delete-after") {
		for _, u := range p.operands {
			if base := urlBase(u.Value); base != "" {
				c.writes([]Arg{{Value: dir + base, Static: u.Static, Span: u.Span}})
			}
		}
	}
	c.uploadFiles(p.values("post-file", "body-file"))
	for _, v := range p.values("use-askpass") {
		c.programOption(v, "wget --use-askpass")
	}
	for _, v := range p.values("e") {
		k, val, _ := strings.Cut(strings.ReplaceAll(v.Value, " ", ""), "=")
		if strings.EqualFold(k, "use_askpass") || strings.EqualFold(k, "useaskpass") {
			c.programOption(Arg{Value: val, Static: v.Static, Span: v.Span}, "wget -e use_askpass")
		}
	}
}

// ruleNet: other HTTP clients and network tools: metadata endpoints;
// httpie and xh send @FILE as a body or field=@FILE as a form file.
func ruleNet(c *cmd) {
	c.metadata()
	switch c.name {
	case "http", "https", "xh", "xhs", "httpie":
		var files []Arg
		for _, a := range c.args[1:] {
			v := a.Value
			switch {
			case strings.HasPrefix(v, "@"):
				files = append(files, sub(a, 1))
			case !strings.HasPrefix(v, "-"):
				if i := strings.Index(v, "@"); i > 0 && !strings.ContainsAny(v[:i], ":=/") {
					files = append(files, sub(a, i+1))
				} else if i := strings.Index(v, "=@"); i > 0 {
					files = append(files, sub(a, i+2))
				}
			}
		}
		c.uploadFiles(files)
	}
}

// ruleNetcat: -e/-c attach a shell (a reverse shell); socat EXEC/SYSTEM
// addresses do the same; input from a file or a pipe to a remote host is
// an upload.
func ruleNetcat(c *cmd) {
	c.metadata()
	listen := false
	if c.name == "socat" {
		var files []Arg
		network := false
		for _, a := range c.args[1:] {
			v := strings.ToLower(a.Value)
			typ, _, _ := strings.Cut(v, ":")
			switch {
			case strings.HasPrefix(v, "exec:") || strings.HasPrefix(v, "system:"):
				c.find(clsReverseShell, a.Span)
			case typ == "file" || typ == "open" || typ == "gopen" || typ == "create":
				f := sub(a, len(typ)+1)
				f.Value, _, _ = strings.Cut(f.Value, ",")
				files = append(files, f)
				c.writes([]Arg{f})
			case strings.HasPrefix(typ, "unix") || typ == "pipe" || typ == "named" || typ == "local":
				// A socket or FIFO by its path: connecting to warden's
				// admin socket is reaching warden.
				f := sub(a, len(typ)+1)
				f.Value, _, _ = strings.Cut(f.Value, ",")
				c.writes([]Arg{f})
			case strings.HasPrefix(typ, "tcp") || strings.HasPrefix(typ, "udp") || strings.HasPrefix(typ, "ssl") ||
				strings.HasPrefix(typ, "openssl") || strings.HasPrefix(typ, "sctp") || strings.HasPrefix(typ, "socks") ||
				strings.HasPrefix(typ, "proxy") || strings.HasPrefix(typ, "dccp"):
				if strings.Contains(typ, "listen") {
					listen = true
				} else {
					network = true
				}
			}
		}
		if network {
			c.uploadFiles(files)
			c.w.meta[c.idx].sends = true
		}
		return
	}
	for _, a := range c.args[1:] {
		v := a.Value
		switch {
		case v == "-l" || v == "--listen" || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "l"):
			listen = true
		}
		if v == "-e" || v == "-c" || v == "--exec" || v == "--sh-exec" || v == "--lua-exec" || strings.HasPrefix(v, "--exec=") || strings.HasPrefix(v, "--sh-exec=") ||
			(strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsAny(v[1:], "ec") && len(v) <= 5) {
			c.find(clsReverseShell, c.span)
			return
		}
	}
	if listen {
		return
	}
	c.w.meta[c.idx].sends = true
	switch c.in.kind {
	case stdinFile:
		if c.in.file.Value != "" {
			c.uploadFiles([]Arg{c.in.file})
		}
	case stdinText:
		c.findDetail(clsUpload, c.span, "standard input")
	case stdinPipe:
		c.w.meta[c.idx].pipeUpload = true // judged with the pipeline
	}
}

// remote reports an scp/rsync operand on another host: host:path,
// user@host:path, host::module, rsync://…
func remote(v string) bool {
	if strings.HasPrefix(v, "rsync://") || strings.HasPrefix(v, "scp://") || strings.HasPrefix(v, "sftp://") {
		return true
	}
	i := strings.IndexByte(v, ':')
	return i > 0 && !strings.ContainsRune(v[:i], '/')
}

var scpSpec = spec("", "3", "4", "6", "A", "B", "C", "O", "p", "q", "R", "r", "T", "v", "c=", "D=", "F=", "i=", "J=", "l=", "o=", "P=", "S=", "X=")

// ruleSCP: local sources to a remote destination are uploaded; remote
// sources are written to the local destination. -S and -o ProxyCommand
// run programs.
func ruleSCP(c *cmd) {
	p := c.parse(scpSpec)
	for _, v := range p.values("S") {
		c.programOption(v, c.name+" -S")
	}
	for _, v := range p.values("o") {
		c.sshOption(v)
	}
	if c.name == "sftp" {
		if c.in.kind == stdinText {
			for _, line := range strings.Split(c.in.text, "\n") {
				f := strings.Fields(line)
				if len(f) >= 2 && (f[0] == "put" || f[0] == "mput" || f[0] == "reput") {
					c.uploadFiles([]Arg{{Value: f[1], Static: c.in.static, Span: c.in.span}})
				}
			}
		}
		return
	}
	c.transfer(p.operands, p.has("r"))
}

// transfer judges SRC… DEST where either side may be remote.
func (c *cmd) transfer(ops []Arg, recursive bool) {
	if len(ops) < 2 {
		return
	}
	dst, srcs := ops[len(ops)-1], ops[:len(ops)-1]
	if remote(dst.Value) {
		var local []Arg
		for _, s := range srcs {
			if !remote(s.Value) {
				local = append(local, s)
			}
		}
		c.uploadFiles(local)
		return
	}
	c.writes([]Arg{dst})
	for _, s := range srcs {
		if recursive && strings.HasSuffix(s.Value, "/") {
			// rsync SRC/ DIR: SRC's contents land in DIR itself.
			c.tree([]Arg{dst}, accWrite)
		}
		base := path.Base(strings.TrimSuffix(s.Value[strings.LastIndexByte(s.Value, ':')+1:], "/"))
		if base == "" || base == "." || base == "/" {
			continue
		}
		into := dst
		into.Value = strings.TrimSuffix(dst.Value, "/") + "/" + base
		if cls, tier, d := c.w.argClass(into, accWrite); cls != "" {
			c.w.findTier(c.idx, cls, tier, dst.Span, d)
		}
	}
	if recursive {
		var local []Arg
		for _, s := range srcs {
			if !remote(s.Value) {
				local = append(local, s)
			}
		}
		c.tree(local, accRead)
	}
}

var rsyncSpec = spec("n", "e|rsh=", "rsync-path=", "f|filter=", "exclude=", "include=", "exclude-from=", "include-from=", "files-from=",
	"T|temp-dir=", "partial-dir=", "log-file=", "log-file-format=", "password-file=", "B|block-size=", "bwlimit=", "compare-dest=",
	"copy-dest=", "link-dest=", "backup-dir=", "suffix=", "chmod=", "chown=", "usermap=", "groupmap=", "timeout=", "contimeout=",
	"port=", "sockopts=", "out-format=", "M|remote-option=", "info=", "debug=", "max-size=", "min-size=", "max-delete=",
	"modify-window=", "iconv=", "protocol=", "checksum-choice|cc=", "compress-choice|zc=", "compress-level|zl=", "skip-compress=",
	"stop-after=", "stop-at=", "outbuf=", "write-batch=", "only-write-batch=", "read-batch=", "address=", "checksum-seed=",
	"early-input=", "copy-as=", "max-alloc=",
	"v|verbose", "q|quiet", "c|checksum", "a|archive", "r|recursive", "R|relative", "b|backup", "u|update", "d|dirs", "l|links",
	"L|copy-links", "k|copy-dirlinks", "K|keep-dirlinks", "H|hard-links", "p|perms", "E|executability", "A|acls", "X|xattrs",
	"o|owner", "g|group", "D", "devices", "specials", "t|times", "U|atimes", "N|crtimes", "O|omit-dir-times", "J|omit-link-times",
	"S|sparse", "n|dry-run", "W|whole-file", "x|one-file-system", "z|compress", "C|cvs-exclude", "P", "partial", "progress",
	"h|human-readable", "i|itemize-changes", "m|prune-empty-dirs", "s|protect-args|secluded-args", "8|8-bit-output", "4|ipv4",
	"6|ipv6", "delete", "delete-before", "delete-during", "delete-delay", "delete-after", "delete-excluded", "delete-missing-args",
	"ignore-missing-args", "ignore-errors", "force", "remove-source-files", "existing", "ignore-existing", "inplace", "append",
	"append-verify", "fake-super", "super", "numeric-ids", "stats", "list-only", "mkpath", "F", "y|fuzzy", "old-args", "copy-unsafe-links",
	"safe-links", "munge-links", "no-implied-dirs", "trust-sender", "size-only", "ignore-times", "I", "version", "help", "daemon")

// ruleRsync: like scp, plus --delete (which deletes at the destination
// what the source lacks: an empty source and / for a destination wipe it)
// and -e/--rsync-path programs.
func ruleRsync(c *cmd) {
	p := c.parse(rsyncSpec)
	if p.has("n", "list-only", "help", "version") {
		return
	}
	for _, v := range p.values("e") {
		if f := strings.Fields(v.Value); len(f) > 0 && (f[0] == "ssh" || strings.HasSuffix(f[0], "/ssh")) && !strings.Contains(strings.ToLower(v.Value), "proxycommand") {
			continue
		}
		c.programOption(v, "rsync -e")
	}
	c.transfer(p.operands, true)
	if len(p.operands) >= 2 {
		dst := p.operands[len(p.operands)-1]
		if p.has("delete", "delete-before", "delete-during", "delete-delay", "delete-after", "delete-excluded") && !remote(dst.Value) {
			if r, ok := c.w.resolvePath(dst); ok {
				if cls := c.w.deleteTarget(strings.TrimSuffix(r, "/"), dst.Glob); cls != "" {
					c.findDetail(cls, dst.Span, r)
				} else {
					c.findDetail(clsDeleteRecursive, dst.Span, r)
				}
			}
		}
		if p.has("remove-source-files") {
			c.writes(p.operands[:len(p.operands)-1])
		}
	}
}

// ruleCloudCopy: copies to cloud storage and mail attachments are uploads.
func ruleCloudCopy(c *cmd) {
	switch c.name {
	case "gsutil", "rclone":
		if len(c.args) < 2 {
			return
		}
		var ops []Arg
		for _, a := range c.args[2:] {
			if !strings.HasPrefix(a.Value, "-") {
				ops = append(ops, a)
			}
		}
		switch c.args[1].Value {
		case "cp", "mv", "rsync", "copy", "move", "sync", "copyto", "moveto":
			if len(ops) >= 2 && remote(ops[len(ops)-1].Value) {
				var local []Arg
				for _, s := range ops[:len(ops)-1] {
					if !remote(s.Value) {
						local = append(local, s)
					}
				}
				c.uploadFiles(local)
			}
		}
	case "mail", "mailx", "mutt":
		for i := 1; i+1 < len(c.args); i++ {
			if c.args[i].Value == "-a" || c.args[i].Value == "-A" || c.args[i].Value == "--attach" {
				c.uploadFiles(c.args[i+1 : i+2])
			}
		}
		c.w.meta[c.idx].sends = true
	case "sendmail":
		c.w.meta[c.idx].sends = true
		if c.in.kind == stdinFile {
			c.uploadFiles([]Arg{c.in.file})
		}
	}
}

// ruleFirewall flags flushing the firewall's rules.
func ruleFirewall(c *cmd) {
	vals := strings.ToLower(strings.Join(words(c.args[1:]), " "))
	switch c.name {
	case "nft":
		if strings.Contains(vals, "flush ruleset") || strings.Contains(vals, "delete table") || strings.Contains(vals, "flush table") {
			c.find(clsFirewallFlush, c.span)
		}
	case "ufw":
		if vals == "disable" || strings.HasPrefix(vals, "reset") || strings.HasPrefix(vals, "--force reset") || strings.HasPrefix(vals, "-f reset") {
			c.find(clsFirewallFlush, c.span)
		}
	case "firewall-cmd":
		if strings.Contains(vals, "--panic-on") || strings.Contains(vals, "--set-default-zone=trusted") || strings.Contains(vals, "--complete-reload") {
			c.find(clsFirewallFlush, c.span)
		}
	case "pfctl":
		if strings.Contains(vals, "-d") || strings.Contains(vals, "-f") && strings.Contains(vals, "/dev/null") || strings.Contains(vals, "-F") {
			c.find(clsFirewallFlush, c.span)
		}
	default:
		for _, a := range c.args[1:] {
			if a.Value == "-F" || a.Value == "--flush" || a.Value == "-X" || a.Value == "--delete-chain" ||
				(strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "--") && strings.Contains(a.Value, "F")) {
				c.find(clsFirewallFlush, c.span)
				return
			}
			if (a.Value == "-P" || a.Value == "--policy") && strings.Contains(vals, "accept") {
				c.find(clsFirewallFlush, c.span)
				return
			}
		}
	}
}

// isDecoder reports a command that decodes or unscrambles its input.
func isDecoder(c *Command) bool {
	words := c.Words()
	has := func(fs ...string) bool { return hasFlag(words[1:], fs...) }
	switch c.key() {
	case "base64", "base32", "basenc":
		return has("-d", "--decode", "-D")
	case "xxd":
		return has("-r", "-revert")
	case "openssl":
		return has("-d", "-base64", "-a")
	case "uudecode", "tr", "rev", "gpg", "zcat", "gunzip", "gzip", "bzcat", "xzcat", "unxz", "zstdcat":
		return c.key() != "gzip" || has("-d")
	}
	return false
}
