package codescan

import "testing"

var benchSources = []struct{ name, lang, src string }{
	{"python_oneliner", Python, "print(sum(range(9)))"},
	{"python_script", Python, "import os, json, sys\n\ndef load(p):\n    with open(p) as f:\n        return json.load(f)\n\nfor name in sys.argv[1:]:\n    d = load(name)\n    print(name, len(d), os.path.basename(name))\n    if d.get('clean'):\n        os.remove(name + '.tmp')\n"},
	{"node_oneliner", Node, "console.log(process.version)"},
	{"node_script", Node, "const fs = require('fs')\nconst path = require('path')\nfor (const f of process.argv.slice(2)) {\n  const d = JSON.parse(fs.readFileSync(f, 'utf8'))\n  console.log(path.basename(f), Object.keys(d).length)\n  if (d.clean) fs.unlinkSync(f + '.tmp')\n}\n"},
	{"perl_oneliner", Perl, `print "hello\n";`},
}

func BenchmarkAnalyze(b *testing.B) {
	for _, s := range benchSources {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Analyze(s.lang, s.src)
			}
		})
	}
}
