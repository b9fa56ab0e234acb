package tools

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/sandbox/sandboxtest"
)

func TestCodeRuns(t *testing.T) {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	tests := []struct{ lang, src, want string }{
		{"sh", "echo from sh; exit 4", "from sh"},
		{"bash", "x=(a b); echo ${#x[@]}", "2"},
		{"python", "print(6*7)", "42"},
		{"node", "console.log(6*7)", "42"},
	}
	for _, tt := range tests {
		prog := interpreters[tt.lang][0]
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv("WARDEN_FULL") != "" && tt.lang != "node" {
				t.Fatalf("%s missing", prog)
			}
			t.Logf("skip %s: %s not installed", tt.lang, prog)
			continue
		}
		var out bytes.Buffer
		code, err := Code{Terminal: Terminal{Env: env, Sandbox: sandboxtest.New(t)}}.Run(context.Background(), tt.lang, tt.src, t.TempDir(), &out, &out)
		if err != nil || !strings.Contains(out.String(), tt.want) {
			t.Errorf("%s: code %d err %v out %q", tt.lang, code, err, out.String())
		}
	}
	if _, err := (Code{}).Run(context.Background(), "cobol", "x", "", nil, nil); err == nil {
		t.Error("unknown language must fail")
	}
}

func TestOutputCap(t *testing.T) {
	var out bytes.Buffer
	term := Terminal{Env: []string{"PATH=/usr/bin:/bin"}, MaxOutput: 100, Sandbox: sandboxtest.New(t)}
	code, err := term.Run(context.Background(), "head -c 100000 /dev/zero | tr '\\0' x; echo done >&2", "", &out, &out)
	if err != nil || code != 0 {
		t.Fatalf("code %d err %v", code, err)
	}
	if out.Len() != 100+len(TruncatedMarker) || !strings.HasSuffix(out.String(), TruncatedMarker) {
		t.Fatalf("capped output is %d bytes: %q…", out.Len(), out.String()[:20])
	}
}

func TestFilesConfined(t *testing.T) {
	root := t.TempDir()
	f := Files{Root: root}
	if err := f.WriteFile("a/b.txt", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if got, err := f.ReadFile(filepath.Join(root, "a/b.txt")); err != nil || string(got) != "hi" {
		t.Fatalf("%q %v", got, err)
	}
	outside := filepath.Join(filepath.Dir(root), "outside-"+filepath.Base(root))
	for _, name := range []string{"../escape", outside, "a/../../escape"} {
		if err := f.WriteFile(name, []byte("x")); err == nil {
			t.Errorf("wrote outside the root via %q", name)
		}
	}
	if err := os.Symlink("/etc", filepath.Join(root, "etc")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadFile("etc/hostname"); err == nil {
		t.Error("read through a symlink out of the root")
	}
	if err := f.WriteFile("big", make([]byte, MaxFileSize+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big write: %v", err)
	}
}
