package cli

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
)

// logOptions are the root's --log-format and --log-level, read by the
// commands that log (serve, chat, hook, mcp).
type logOptions struct {
	format string // "text" or "json"
	level  string // "" means the command's default
}

// addLogFlags adds the persistent logging flags to the root command.
func addLogFlags(root *cobra.Command) {
	root.PersistentFlags().String("log-format", "text", "log format on stderr: text or json")
	root.PersistentFlags().String("log-level", "", "least severe level logged: debug, info, warn or error (default: info for serve, warn elsewhere)")
}

// checkLogFlags refuses a bad --log-format or --log-level before the
// command runs, as a usage error.
func checkLogFlags(cmd *cobra.Command) error {
	o := logOptionsOf(cmd)
	if o.format != "text" && o.format != "json" {
		return usageError{fmt.Errorf("--log-format %q: want text or json", o.format)}
	}
	if _, err := parseLevel(o.level, slog.LevelInfo); err != nil {
		return usageError{err}
	}
	return nil
}

// logOptionsOf reads the logging flags as the command sees them.
func logOptionsOf(cmd *cobra.Command) logOptions {
	var o logOptions
	o.format, _ = cmd.Flags().GetString("log-format")
	o.level, _ = cmd.Flags().GetString("log-level")
	if o.format == "" {
		o.format = "text"
	}
	return o
}

// parseLevel reads a --log-level value; "" is def.
func parseLevel(s string, def slog.Level) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "":
		return def, nil
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return def, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
}

// logger builds the command's logger on w; def is the command's level
// when --log-level is not given. The flags were checked before the
// command ran, so a bad value cannot reach here.
func (o logOptions) logger(w io.Writer, def slog.Level) *slog.Logger {
	level, _ := parseLevel(o.level, def)
	h := &slog.HandlerOptions{Level: level}
	if o.format == "json" {
		return slog.New(slog.NewJSONHandler(w, h))
	}
	return slog.New(slog.NewTextHandler(w, h))
}
