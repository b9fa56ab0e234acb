package archtest

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// dockerBuild is the Dockerfile's release build line: its flags, then
// its -ldflags value.
var dockerBuild = regexp.MustCompile(`(?m)^RUN CGO_ENABLED=0 go build ((?:-\S+ )*)-ldflags="([^"]*)" -o /out/warden \./cmd/warden$`)

// dockerHookBuild is the Dockerfile's build line of the hook binary.
var dockerHookBuild = regexp.MustCompile(`(?m)^RUN CGO_ENABLED=0 go build ((?:-\S+ )*)-ldflags="([^"]*)" -o /out/warden-hook \./cmd/warden-hook$`)

// dockerCopy is a runtime image's copy of both binaries.
var dockerCopy = regexp.MustCompile(`(?m)^COPY --from=build /out/warden /out/warden-hook /usr/local/bin/$`)

// releaseFlags reads the build flags and the ldflags of the Dockerfile's
// release line.
func releaseFlags(t *testing.T) (flags []string, ldflags string) {
	t.Helper()
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := dockerBuild.FindSubmatch(data)
	if m == nil {
		t.Fatal(`the Dockerfile has no line RUN CGO_ENABLED=0 go build FLAGS -ldflags="…" -o /out/warden ./cmd/warden`)
	}
	return strings.Fields(string(m[1])), string(m[2])
}

// linuxRelease returns the release flags (releaseFlags) to a test that
// builds release binaries and reads them as Linux ELF files; it skips the
// test with -short and on other systems.
func linuxRelease(t *testing.T) (flags []string, ldflags string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds release binaries")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads a Linux ELF binary")
	}
	return releaseFlags(t)
}

// goBuild builds pkg to out as the release does: with CGO_ENABLED=0,
// flags and, unless it is empty, ldflags (empty keeps the symbols).
func goBuild(t *testing.T, out, pkg string, flags []string, ldflags string) {
	t.Helper()
	args := append([]string{"build"}, flags...)
	if ldflags != "" {
		args = append(args, "-ldflags="+ldflags)
	}
	args = append(args, "-o", out, pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // the go tool needs its own environment (GOPATH, GOCACHE, …)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
}

// TestPackagingFlagsAgree keeps the release builds alike: the
// Dockerfile's lines and .goreleaser.yaml name the same environment,
// flags and ldflags, and GoReleaser builds linux and darwin on amd64 and
// arm64.
func TestPackagingFlagsAgree(t *testing.T) {
	flags, ldflags := releaseFlags(t)
	data, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int `yaml:"version"`
		Builds  []struct {
			Main    string   `yaml:"main"`
			Env     []string `yaml:"env"`
			Flags   []string `yaml:"flags"`
			Ldflags []string `yaml:"ldflags"`
			Goos    []string `yaml:"goos"`
			Goarch  []string `yaml:"goarch"`
		} `yaml:"builds"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Version != 2 || len(cfg.Builds) != 2 {
		t.Fatalf(".goreleaser.yaml: version %d with %d builds, want version 2 with two builds (warden, warden-hook)", cfg.Version, len(cfg.Builds))
	}
	for i, main := range []string{"./cmd/warden", "./cmd/warden-hook"} {
		b := cfg.Builds[i]
		if b.Main != main || !slices.Equal(b.Env, []string{"CGO_ENABLED=0"}) || !slices.Equal(b.Flags, flags) || strings.Join(b.Ldflags, " ") != ldflags {
			t.Errorf(".goreleaser.yaml build %d: %s with env %q flags %q ldflags %q; want %s with CGO_ENABLED=0, %q, %q (the Dockerfile's)", i, b.Main, b.Env, b.Flags, b.Ldflags, main, flags, ldflags)
		}
		slices.Sort(b.Goos)
		slices.Sort(b.Goarch)
		if !slices.Equal(b.Goos, []string{"darwin", "linux"}) || !slices.Equal(b.Goarch, []string{"amd64", "arm64"}) {
			t.Errorf(".goreleaser.yaml %s targets %v × %v, want darwin, linux × amd64, arm64", b.Main, b.Goos, b.Goarch)
		}
	}
	// The images ship the hook binary beside warden, built alike:
	// warden hook install points agents at it.
	data, err = os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := dockerHookBuild.FindSubmatch(data)
	switch {
	case m == nil:
		t.Error("the Dockerfile does not build ./cmd/warden-hook to /out/warden-hook")
	case !slices.Equal(strings.Fields(string(m[1])), flags) || string(m[2]) != ldflags:
		t.Errorf("the Dockerfile builds warden-hook with %q -ldflags=%q, warden with %q -ldflags=%q", m[1], m[2], flags, ldflags)
	}
	if n := len(dockerCopy.FindAll(data, -1)); n != 2 {
		t.Errorf("the Dockerfile copies warden and warden-hook into %d images, want 2 (minimal, runtime)", n)
	}
}

// TestReleaseBinary builds warden the way the Dockerfile does and checks
// what the distroless image relies on: a static binary (no ELF
// interpreter, so no libc needed), stripped, that runs.
func TestReleaseBinary(t *testing.T) {
	flags, ldflags := linuxRelease(t)
	out := filepath.Join(t.TempDir(), "warden")
	goBuild(t, out, "./cmd/warden", flags, ldflags)
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the release binary has an ELF interpreter: it is not static and will not run on distroless/static")
		}
	}
	if f.Section(".symtab") != nil {
		t.Error("the release binary has a symbol table: -ldflags=-s did not apply")
	}
	v := exec.Command(out, "--version")
	v.Env = []string{}
	if b, err := v.CombinedOutput(); err != nil || !strings.HasPrefix(string(b), "warden version ") {
		t.Errorf("%s --version = %q, %v", out, b, err)
	}
	st, _ := os.Stat(out)
	t.Logf("release binary: %.1f MB", float64(st.Size())/(1<<20))
}
