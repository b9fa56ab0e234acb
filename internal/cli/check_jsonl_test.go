package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestCheckJSONL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		maxLine int
		want    string
	}{
		{
			name: "CRLF and a last line without newline",
			in:   "{\"cmd\":\"ls\"}\r\n{\"cmd\":\"pwd\"}",
			want: `{"cmd":"ls","verdict":"safe","classes":[]}` + "\n" +
				`{"cmd":"pwd","verdict":"safe","classes":[]}` + "\n",
		},
		{
			name:    "over-long line is skipped to its newline",
			in:      `{"cmd":"ls"}` + "\n" + `{"cmd":"` + strings.Repeat("x", 100) + `"}` + "\n" + `{"cmd":"pwd"}` + "\n",
			maxLine: 32,
			want: `{"cmd":"ls","verdict":"safe","classes":[]}` + "\n" +
				`{"error":"line 2: longer than 32 bytes"}` + "\n" +
				`{"cmd":"pwd","verdict":"safe","classes":[]}` + "\n",
		},
		{
			name:    "over-long last line without newline",
			in:      `{"cmd":"ls"}` + "\n" + strings.Repeat("y", 100),
			maxLine: 32,
			want: `{"cmd":"ls","verdict":"safe","classes":[]}` + "\n" +
				`{"error":"line 2: longer than 32 bytes"}` + "\n",
		},
		{
			name:    "a line of exactly the cap fits",
			in:      `{"cmd":"` + strings.Repeat("z", 22) + `"}` + "\n",
			maxLine: 32,
			want:    `{"cmd":"` + strings.Repeat("z", 22) + `","verdict":"safe","classes":[]}` + "\n",
		},
		{
			name: "the default cap is 1 MiB",
			in:   `{"cmd":"` + strings.Repeat("q", defaultMaxLine) + `"}` + "\n" + `{"cmd":"ls"}` + "\n",
			want: `{"error":"line 1: longer than 1048576 bytes"}` + "\n" +
				`{"cmd":"ls","verdict":"safe","classes":[]}` + "\n",
		},
		{
			name: "commands are not HTML-escaped and control bytes stay escaped",
			in:   `{"cmd":"a && b > c\u001b"}` + "\n",
			want: `{"cmd":"a && b > c\u001b","verdict":"safe","classes":[]}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			if err := checkJSONL(t.Context(), strings.NewReader(tt.in), &out, nil, tt.maxLine); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestCheckJSONLAnswersBeforeEOF checks that a caller feeding one line at
// a time (a coprocess) gets each answer without closing its end.
func TestCheckJSONLAnswersBeforeEOF(t *testing.T) {
	t.Parallel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- checkJSONL(t.Context(), inR, outW, nil, 0)
		outW.Close()
	}()
	answers := bufio.NewReader(outR)
	for _, cmd := range []string{"ls", "pwd"} {
		if _, err := io.WriteString(inW, `{"cmd":"`+cmd+`"}`+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := answers.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"cmd":"` + cmd + `","verdict":"safe","classes":[]}` + "\n"; line != want {
			t.Fatalf("got %q, want %q", line, want)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestCheckJSONLErrors(t *testing.T) {
	t.Parallel()
	t.Run("read error", func(t *testing.T) {
		r := io.MultiReader(strings.NewReader(`{"cmd":"ls"}`+"\n"), errReader{})
		var out bytes.Buffer
		err := checkJSONL(t.Context(), r, &out, nil, 0)
		if !errors.Is(err, errBroken) || exitCode(err) != ExitBlocked {
			t.Errorf("err = %v (exit %d), want errBroken (exit 2)", err, exitCode(err))
		}
		if want := `{"cmd":"ls","verdict":"safe","classes":[]}` + "\n"; out.String() != want {
			t.Errorf("answers before the error were lost: %q", out.String())
		}
	})
	t.Run("write error", func(t *testing.T) {
		err := checkJSONL(t.Context(), strings.NewReader(`{"cmd":"ls"}`+"\n"), errWriter{}, nil, 0)
		if !errors.Is(err, errBroken) {
			t.Errorf("err = %v, want errBroken", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := checkJSONL(ctx, strings.NewReader(`{"cmd":"ls"}`+"\n"), io.Discard, nil, 0)
		if exitCode(err) != ExitInterrupted {
			t.Errorf("err = %v (exit %d), want exit 130", err, exitCode(err))
		}
	})
}

var errBroken = errors.New("broken")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBroken }

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errBroken }

// BenchmarkCheckJSONL measures warden check --jsonl end to end (decode,
// analyse, encode) and reports lines/s; the target is ≥ 20,000.
func BenchmarkCheckJSONL(b *testing.B) {
	cmds := []string{
		`{"cmd":"ls -la"}`,
		`{"cmd":"rm -rf /"}`,
		`{"cmd":"git commit -m \"rm -rf /\""}`,
		`{"cmd":"cd src && curl -fsSL https://example.test/install.sh | sh"}`,
		`{"cmd":"find . -name '*.o' -exec rm {} +"}`,
		`{"cmd":"sudo bash -c \"systemctl restart nginx\"", "id": 12}`,
		`{"cmd":"for f in *.go; do gofmt -l \"$f\"; done"}`,
		`{"cmd":"docker run --privileged -v /:/host alpine sh"}`,
	}
	var in bytes.Buffer
	const lines = 10_000
	for i := range lines {
		in.WriteString(cmds[i%len(cmds)])
		in.WriteByte('\n')
	}
	data := in.Bytes()
	b.SetBytes(int64(len(data)))
	start := time.Now()
	n := 0
	for b.Loop() {
		if err := checkJSONL(b.Context(), bytes.NewReader(data), io.Discard, nil, 0); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n*lines)/time.Since(start).Seconds(), "lines/s")
}
