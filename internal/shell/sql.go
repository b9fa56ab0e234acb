package shell

import (
	"regexp"
	"strings"
)

// Family sql: destructive statements given to database clients on the
// command line, with -c/-e/--command or a here-document.

var _ = family(func() {
	register("sql", ruleSQL, "psql", "mysql", "mariadb", "sqlite3", "clickhouse-client", "cockroach", "duckdb", "sqlcmd", "mongosh", "mongo", "redis-cli")
})

var (
	sqlDrop     = regexp.MustCompile(`(?i)\bdrop\s+(table|database|schema|index|view|user|role|function|procedure|trigger|sequence|type|extension|owned)\b`)
	sqlTruncate = regexp.MustCompile(`(?i)\btruncate\b`)
	sqlDelete   = regexp.MustCompile(`(?i)\bdelete\s+from\s+[^;]*`)
	sqlWhere    = regexp.MustCompile(`(?i)\bwhere\b`)
	mongoDrop   = regexp.MustCompile(`\.(dropDatabase|drop)\s*\(|\.deleteMany\(\s*\{\s*\}\s*\)`)
)

// sql checks SQL text for destructive statements.
func (c *cmd) sql(text string, sp Span) {
	if sqlDrop.MatchString(text) {
		c.find(clsSQLDrop, sp)
	}
	if sqlTruncate.MatchString(text) {
		c.find(clsSQLTruncate, sp)
	}
	for _, m := range sqlDelete.FindAllString(text, -1) {
		if !sqlWhere.MatchString(m) {
			c.find(clsSQLDeleteAll, sp)
		}
	}
}

// sqlClients are the database clients' options: which carry statements
// (psql -c, mysql -e), read the getopt way (psql --comm, mysql -eSQL).
var sqlClients = map[string]struct {
	spec *optSpec
	code []string
}{
	"psql": {spec("", "c|command=", "d|dbname=", "f|file=", "v|set|variable=", "V|version", "X|no-psqlrc", "1|single-transaction",
		"help?", "a|echo-all", "b|echo-errors", "e|echo-queries", "E|echo-hidden", "L|log-file=", "n|no-readline", "o|output=",
		"q|quiet", "s|single-step", "S|single-line", "A|no-align", "csv", "F|field-separator=", "H|html", "P|pset=", "R|record-separator=",
		"t|tuples-only", "T|table-attr=", "x|expanded", "z|field-separator-zero", "0|record-separator-zero", "h|host=", "p|port=",
		"U|username=", "w|no-password", "W|password"), []string{"c"}},
	"mysql": {spec("", "e|execute=", "u|user=", "p|password?", "h|host=", "P|port=", "D|database=", "S|socket=", "protocol=", "B|batch",
		"N|skip-column-names", "s|silent", "v|verbose", "t|table", "r|raw", "f|force", "A|no-auto-rehash", "defaults-file=",
		"defaults-extra-file=", "login-path=", "ssl-mode=", "ssl-ca=", "ssl-cert=", "ssl-key=", "default-character-set=", "init-command=",
		"local-infile?", "X|xml", "H|html", "i|ignore-spaces", "E|vertical", "V|version", "help", "safe-updates", "connect-timeout=",
		"max-allowed-packet=", "compress", "C", "tee=", "pager?", "prompt=", "binary-mode", "comments", "c"), []string{"e", "init-command"}},
	"clickhouse-client": {spec("", "q|query=", "h|host=", "port=", "u|user=", "password=", "d|database=", "m|multiline", "n|multiquery",
		"f|format=", "t|time", "stacktrace", "config-file=", "secure", "param_=", "queries-file="), []string{"q"}},
	"duckdb": {spec("-", "c|cmd=", "s=", "init=", "readonly", "unsigned", "csv", "json", "line", "list", "markdown", "table", "box", "ascii",
		"html", "bail", "batch", "echo", "header", "noheader", "separator=", "nullvalue=", "newline=", "version", "help"), []string{"c", "cmd", "s"}},
	"sqlcmd": {spec("-", "Q|query=", "q|initial-query=", "S|server=", "d|database-name=", "U|user-name=", "P|password=", "E",
		"i|input-file=", "o|output-file=", "C", "N", "l=", "t=", "h=", "s=", "w=", "W", "b", "V=", "m=", "r?", "y=", "Y=", "k?", "e", "I",
		"v=", "x", "X?", "?"), []string{"Q", "q"}},
	"cockroach": {spec("", "e|execute=", "url=", "host=", "user=", "database|d=", "insecure", "certs-dir=", "format=", "set=",
		"echo-sql", "safe-updates?"), []string{"e"}},
	"mariadb": {}, // like mysql (see init)
}

func init() { sqlClients["mariadb"] = sqlClients["mysql"] }

var mongoSpec = spec("-", "eval=", "quiet", "nodb", "norc", "shell", "host=", "port=", "u|username=", "p|password?",
	"authenticationDatabase=", "authenticationMechanism=", "tls", "tlsCAFile=", "tlsCertificateKeyFile=", "json=", "f|file=", "help", "version")

var sqliteSpec = spec("-", "cmd=", "init=", "separator=", "newline=", "nullvalue=", "vfs=", "maxsize=", "mmap=", "pagecache==",
	"lookaside==", "heap=", "append", "ascii", "bail", "batch", "box", "column", "csv", "deserialize", "echo", "header", "noheader",
	"html", "interactive", "json", "line", "list", "markdown", "memtrace", "nofollow", "nonce=", "quote", "readonly", "safe", "stats",
	"table", "tabs", "unsafe-testing", "version", "help", "A|archive", "zip")

func ruleSQL(c *cmd) {
	switch c.in.kind {
	case stdinText:
		c.sql(c.in.text, c.in.span)
	case stdinPipe:
		c.w.meta[c.idx].consumer = "sql" // judged with the pipeline
	}
	switch c.name {
	case "mongosh", "mongo":
		p := c.parse(mongoSpec)
		for _, v := range p.values("eval") {
			if mongoDrop.MatchString(v.Value) {
				c.find(clsSQLDrop, v.Span)
			}
		}
	case "redis-cli":
		for _, a := range c.args[1:] {
			if strings.EqualFold(a.Value, "flushall") || strings.EqualFold(a.Value, "flushdb") {
				c.find(clsSQLDeleteAll, a.Span)
			}
		}
	case "sqlite3":
		// sqlite3 [OPTIONS] FILE [SQL…]
		p := c.parse(sqliteSpec)
		for _, v := range p.values("cmd") {
			c.sql(v.Value, v.Span)
		}
		for _, op := range p.operands[min(1, len(p.operands)):] {
			c.sql(op.Value, op.Span)
		}
	default:
		cl, ok := sqlClients[c.name]
		if !ok || cl.spec == nil {
			return
		}
		p := c.parse(cl.spec)
		for _, v := range p.values(cl.code...) {
			c.sql(v.Value, v.Span)
		}
		if c.name == "duckdb" && len(p.operands) > 1 {
			for _, op := range p.operands[1:] {
				c.sql(op.Value, op.Span) // duckdb FILE SQL
			}
		}
	}
}
