// Package service installs warden's host as a per-user service: a
// systemd user unit on Linux, a launchd agent on macOS. It renders the
// unit from the binary's absolute path and the serve flags chosen, and
// writes it atomically; starting it is left to the service manager (the
// CLI prints, or with --start runs, the one command that does it).
package service

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// ErrExists is returned by Install when a unit is already installed and
// Force is not set.
var ErrExists = errors.New("a warden service unit is already installed")

// Kind is a service manager.
type Kind string

// The service managers warden can install for.
const (
	Systemd Kind = "systemd"
	Launchd Kind = "launchd"
)

// Unit is what to install.
type Unit struct {
	Kind Kind
	// Exe is the absolute path of the warden binary.
	Exe string
	// Args are serve's flags (after "serve").
	Args []string
	// Home is the user's home directory: the unit goes below it.
	Home string
}

// Path is where the unit file lives for u.
func (u Unit) Path() string {
	if u.Kind == Launchd {
		return filepath.Join(u.Home, "Library", "LaunchAgents", "dev.warden.serve.plist")
	}
	return filepath.Join(u.Home, ".config", "systemd", "user", "warden.service")
}

// StartCommand is the command that starts the installed unit now and at
// every login.
func (u Unit) StartCommand() []string {
	if u.Kind == Launchd {
		return []string{"launchctl", "load", "-w", u.Path()}
	}
	return []string{"systemctl", "--user", "enable", "--now", "warden.service"}
}

// StopCommand undoes StartCommand.
func (u Unit) StopCommand() []string {
	if u.Kind == Launchd {
		return []string{"launchctl", "unload", "-w", u.Path()}
	}
	return []string{"systemctl", "--user", "disable", "--now", "warden.service"}
}

var systemdUnit = template.Must(template.New("systemd").Parse(`# warden host, installed by "warden service install".
[Unit]
Description=warden: execution host for AI agents
After=network-online.target

[Service]
Type=simple
ExecStart={{.Exec}}
Restart=on-failure
RestartSec=2
# warden sandboxes what agents run in user, mount and PID namespaces of
# its own: do not add RestrictNamespaces= or PrivateUsers= here.
NoNewPrivileges=yes
UMask=0077

[Install]
WantedBy=default.target
`))

var launchdPlist = template.Must(template.New("launchd").Funcs(template.FuncMap{"xml": xmlText}).Parse(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- warden host, installed by "warden service install". -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>dev.warden.serve</string>
	<key>ProgramArguments</key>
	<array>
{{- range .Argv}}
		<string>{{xml .}}</string>
{{- end}}
	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>Umask</key>
	<integer>63</integer>
</dict>
</plist>
`))

// Render returns the unit file's text.
func (u Unit) Render() ([]byte, error) {
	if !filepath.IsAbs(u.Exe) {
		return nil, fmt.Errorf("service unit: the warden binary path %q is not absolute", u.Exe)
	}
	argv := append([]string{u.Exe, "serve"}, u.Args...)
	var b bytes.Buffer
	var err error
	switch u.Kind {
	case Systemd:
		err = systemdUnit.Execute(&b, struct{ Exec string }{systemdExec(argv)})
	case Launchd:
		err = launchdPlist.Execute(&b, struct{ Argv []string }{argv})
	default:
		return nil, fmt.Errorf("service unit: unknown service manager %q", u.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("service unit: %w", err)
	}
	return b.Bytes(), nil
}

// xmlText escapes s for an XML text node.
func xmlText(s string) (string, error) {
	var b strings.Builder
	if err := xml.EscapeText(&b, []byte(s)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// systemdExec quotes argv for ExecStart= (systemd's own quoting: double
// quotes, backslash escapes; % and $ doubled so systemd expands
// nothing).
func systemdExec(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		a = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$").Replace(a)
		if a == "" || strings.ContainsAny(a, " \t\"'\\;") {
			a = `"` + a + `"`
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}

// Install writes the unit file (parent directories 0700, the file 0644),
// atomically. An existing file is replaced only with force.
func Install(u Unit, force bool) error {
	data, err := u.Render()
	if err != nil {
		return err
	}
	path := u.Path()
	if _, err := os.Stat(path); err == nil && !force {
		return fmt.Errorf("%w at %s (--force replaces it)", ErrExists, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("install service unit: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".warden-unit-*")
	if err != nil {
		return fmt.Errorf("install service unit: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("install service unit: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("install service unit: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("install service unit: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("install service unit: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("install service unit: %w", err)
	}
	return nil
}

// Uninstall removes the unit file; a missing one is not an error.
func Uninstall(u Unit) error {
	if err := os.Remove(u.Path()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("uninstall service unit: %w", err)
	}
	return nil
}
