package shell

import "strings"

// ruleFind handles find: -exec/-execdir/-ok/-okdir run commands, -delete
// deletes, and the start paths say how much.
func ruleFind(c *cmd) {
	i := 1
	for i < len(c.args) && (c.args[i].Value == "-H" || c.args[i].Value == "-L" || c.args[i].Value == "-P" || c.args[i].Value == "-D" || strings.HasPrefix(c.args[i].Value, "-O")) {
		if c.args[i].Value == "-D" {
			i++
		}
		i++
	}
	var starts []Arg
	for i < len(c.args) {
		v := c.args[i].Value
		if strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ")" {
			break
		}
		starts = append(starts, c.args[i])
		i++
	}
	deletes := false
	for i < len(c.args) {
		v := c.args[i].Value
		switch v {
		case "-delete":
			deletes = true
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(c.args) && c.args[j].Value != ";" && c.args[j].Value != "+" {
				j++
			}
			if j > i+1 {
				inner := c.run(c.args[i+1:j], "find "+v)
				if inner >= 0 && c.w.a.Commands[inner].key() == "rm" {
					deletes = true
				}
			}
			i = j
		}
		i++
	}
	if !deletes {
		return
	}
	c.find(clsDeleteFind, c.span)
	for _, s := range starts {
		if cls := deleteTarget(s); cls != "" {
			c.find(cls, s.Span)
		}
	}
}
