package shell

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/protect"
)

// typical are commands of the size agents usually send (< 200 bytes).
var typical = []string{
	`git status --porcelain && git diff --stat`,
	`ls -la src/ | grep -v node_modules | head -n 20`,
	`rm -rf build/ dist/ && npm run build`,
	`curl -fsSL https://example.com/install.sh | bash`,
	`find . -name '*.pyc' -exec rm -f {} +`,
	`sudo systemctl restart nginx && journalctl -u nginx -n 50 --no-pager`,
	`python3 -m pytest -q tests/test_api.py -k "not slow"`,
	`docker compose -f deploy/compose.yml up -d --build web`,
}

func BenchmarkAnalyzeTypical(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Analyze(typical[i%len(typical)])
	}
}

func BenchmarkAnalyze64KiB(b *testing.B) {
	script := first64KiB(func(i int) string { return typical[i%len(typical)] + "\n" })
	benchScript(b, script[:strings.LastIndexByte(script, '\n')+1])
}

// first64KiB is the first 64 KiB of piece(0), piece(1), … run together.
func first64KiB(piece func(i int) string) string {
	var sb strings.Builder
	for i := 0; sb.Len() < 64<<10; i++ {
		sb.WriteString(piece(i))
	}
	return sb.String()[:64<<10]
}

// benchScript times Analyze on script, which must parse.
func benchScript(b *testing.B, script string) {
	b.SetBytes(int64(len(script)))
	for b.Loop() {
		if a := Analyze(script); a.Verdict == Malformed {
			b.Fatal(a.Error)
		}
	}
}

// BenchmarkAnalyze64KiBScript is a 64 KiB install-style script: functions,
// conditionals, case, here-documents, quoting, built from
// testdata/bench/install.sh with the function names varied per copy.
func BenchmarkAnalyze64KiBScript(b *testing.B) {
	tmpl, err := os.ReadFile("testdata/bench/install.sh")
	if err != nil {
		b.Fatal(err)
	}
	script := first64KiB(func(i int) string { return strings.ReplaceAll(string(tmpl), "main", fmt.Sprint("main", i)) })
	benchScript(b, script[:strings.LastIndex(script, "\nmain")+1])
}

// BenchmarkAnalyzeTypicalInDir is the typical commands as the gate
// analyses them: in a known directory, with a home, against a compiled
// protected-path table (symlinks not followed: no file system).
func BenchmarkAnalyzeTypicalInDir(b *testing.B) {
	b.ReportAllocs()
	o := Options{Cwd: "/home/u/project", Home: "/home/u", Protect: protect.New(protect.Paths{StateDir: "/home/u/.local/state/warden", ConfigDir: "/home/u/.config/warden"})}
	for i := 0; b.Loop(); i++ {
		o.Analyze(typical[i%len(typical)])
	}
}

// BenchmarkAnalyzeCorpus analyses every case of testdata/corpus in turn,
// each with its own options: one iteration is one command.
func BenchmarkAnalyzeCorpus(b *testing.B) {
	var opts []Options
	var cmds []string
	for _, cs := range loadCorpus(b) {
		for _, c := range cs {
			opts, cmds = append(opts, c.options()), append(cmds, c.Cmd)
		}
	}
	for _, general := range []bool{false, true} {
		name := "fast"
		if general {
			name = "general"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				o := opts[i%len(opts)]
				o.general = general
				o.Analyze(cmds[i%len(cmds)])
			}
		})
	}
}

// simple are one-command lines of plain words, the fast path's lines.
var simple = []string{
	`git status --porcelain`,
	`ls -la src/`,
	`go test ./...`,
	`npm run build`,
	`rm -rf build/`,
	`cat README.md`,
	`python3 -m pytest -q tests/test_api.py`,
	`docker compose up -d`,
}

// BenchmarkAnalyzeSimple is one-command lines as the gate analyses them;
// the General variant turns the fast path off (same lines, same run).
func BenchmarkAnalyzeSimple(b *testing.B) {
	for _, general := range []bool{false, true} {
		name := "fast"
		if general {
			name = "general"
		}
		b.Run(name, func(b *testing.B) {
			o := Options{Cwd: "/home/u/project", Home: "/home/u", Protect: protect.New(protect.Paths{StateDir: "/home/u/.local/state/warden", ConfigDir: "/home/u/.config/warden"}), general: general}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				o.Analyze(simple[i%len(simple)])
			}
		})
	}
}
