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

func ruleSQL(c *cmd) {
	if c.in.kind == stdinText {
		c.sql(c.in.text, c.in.span)
	}
	switch c.name {
	case "psql":
		c.sqlFlags("-c", "--command")
	case "mysql", "mariadb", "cockroach":
		c.sqlFlags("-e", "--execute")
	case "clickhouse-client":
		c.sqlFlags("-q", "--query")
	case "duckdb":
		c.sqlFlags("-c", "-cmd")
	case "sqlcmd":
		c.sqlFlags("-Q", "--query")
		c.sqlFlags("-q", "--initial-query")
	case "mongosh", "mongo":
		for i, a := range c.args {
			if (a.Value == "--eval" || a.Value == "-eval") && i+1 < len(c.args) {
				if mongoDrop.MatchString(c.args[i+1].Value) {
					c.find(clsSQLDrop, c.args[i+1].Span)
				}
			}
		}
	case "redis-cli":
		for _, a := range c.args[1:] {
			if strings.EqualFold(a.Value, "flushall") || strings.EqualFold(a.Value, "flushdb") {
				c.find(clsSQLDeleteAll, a.Span)
			}
		}
	case "sqlite3":
		seenDB := false
		for i := 1; i < len(c.args); i++ {
			v := c.args[i].Value
			switch {
			case v == "-cmd" && i+1 < len(c.args):
				i++
				c.sql(c.args[i].Value, c.args[i].Span)
			case strings.HasPrefix(v, "-"):
				if slicesHas([]string{"-separator", "-newline", "-nullvalue", "-init", "-vfs", "-maxsize", "-mmap", "-pagecache", "-lookaside", "-heap"}, v) {
					i++
				}
			case !seenDB:
				seenDB = true
			default:
				c.sql(v, c.args[i].Span)
			}
		}
	}
}

func (c *cmd) sqlFlags(short, long string) {
	for i := 1; i < len(c.args); i++ {
		v := c.args[i].Value
		switch {
		case (v == short || v == long) && i+1 < len(c.args):
			c.sql(c.args[i+1].Value, c.args[i+1].Span)
		case strings.HasPrefix(v, long+"="):
			c.sql(v[len(long)+1:], c.args[i].Span)
		case len(short) == 2 && strings.HasPrefix(v, short) && len(v) > 2 && !strings.HasPrefix(v, "--"):
			c.sql(v[2:], c.args[i].Span)
		}
	}
}
