package shell

import (
	"reflect"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestBracePairAsSplit: wordInto's shortcut for a "{}" word gives the
// args the syntax.SplitBraces path gives it, offsets and spans included.
func TestBracePairAsSplit(t *testing.T) {
	for _, src := range []string{"find . -exec rm -f {} +", "xargs -I{} echo {}", "x {} {}", "  {}"} {
		f, err := parse(src)
		if err != nil {
			t.Fatal(err)
		}
		w := &walker{}
		a := &Analysis{Input: src}
		w.start(Options{MaxCommands: defaultMaxCommands, MaxDepth: defaultMaxDepth}, a)
		w.lvl.src = src
		n := 0
		syntax.Walk(f, func(node syntax.Node) bool {
			word, ok := node.(*syntax.Word)
			if !ok || len(word.Parts) != 1 {
				return true
			}
			if lit, ok := word.Parts[0].(*syntax.Lit); !ok || lit.Value != "{}" {
				return true
			}
			n++
			got := w.wordInto(nil, word)
			// The path the shortcut stands for.
			split := *word
			if !syntax.SplitBraces(&split) {
				t.Fatalf("%q: SplitBraces left {} alone", src)
			}
			want := w.resolve(nil, &split)
			for i := range want {
				want[i].Span = w.span(word.Pos(), word.End())
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q: {} gives %+v, SplitBraces %+v", src, got, want)
			}
			return true
		})
		if n == 0 {
			t.Errorf("%q: no {} word", src)
		}
	}
}
