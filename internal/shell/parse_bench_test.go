package shell

import (
	"strings"
	"testing"
)

func BenchmarkParseOnly64KiB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 64<<10; i++ {
		sb.WriteString(typical[i%len(typical)])
		sb.WriteByte('\n')
	}
	script := sb.String()
	for b.Loop() {
		if _, err := parse(script); err != nil {
			b.Fatal(err)
		}
	}
}
