package config

import (
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Sandbox modes, as internal/sandbox names them.
const (
	SandboxWorkspaceWrite = "workspace-write"
	SandboxReadOnly       = "read-only"
	SandboxOff            = "off"
)

// Sandbox is the sandbox: section: how the processes warden starts for
// agents are confined (internal/sandbox). It is read once at start.
type Sandbox struct {
	// Mode is workspace-write (the default), read-only or off. Off runs
	// every command unconfined and must be written explicitly.
	Mode string
	// Hide are paths that do not exist inside the sandbox, beyond
	// warden's own state and config (absolute, or starting with ~/).
	Hide []string
	// Writable are extra writable roots in workspace-write mode
	// (absolute, or starting with ~/).
	Writable []string
	// Network is true unless network: off; off gives each call its own
	// network namespace with only loopback.
	Network bool
}

func defaultSandbox() Sandbox { return Sandbox{Mode: SandboxWorkspaceWrite, Network: true} }

// rawSandbox is the section as written: a mapping, or the shorthand
// scalar `sandbox: off` (any mode name).
type rawSandbox struct {
	n        ast.Node
	mapping  bool
	Mode     node
	Hide     node
	Writable node
	Network  node
}

// UnmarshalYAML implements yaml.NodeUnmarshaler.
func (r *rawSandbox) UnmarshalYAML(x ast.Node) error {
	r.n = x
	switch unwrap(x).(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
	default:
		r.Mode.n = x // the shorthand; the validator reports other shapes
		return nil
	}
	r.mapping = true
	var f struct {
		Mode     node `yaml:"mode"`
		Hide     node `yaml:"hide"`
		Writable node `yaml:"writable"`
		Network  node `yaml:"network"`
	}
	if err := yaml.NodeToValue(x, &f, yaml.Strict(), yaml.DisallowUnknownField()); err != nil {
		return err
	}
	r.Mode, r.Hide, r.Writable, r.Network = f.Mode, f.Hide, f.Writable, f.Network
	return nil
}

// sandbox validates the section. A mode must be named exactly: a typo
// is an error, never a silent fallback to either side.
func (v *validator) sandbox(r *rawSandbox) Sandbox {
	s := defaultSandbox()
	if r == nil || r.n == nil {
		return s
	}
	if _, null := unwrap(r.n).(*ast.NullNode); null {
		return s
	}
	if n := r.Mode.n; n != nil {
		if b, ok := boolValue(n); ok && !b {
			s.Mode = SandboxOff // YAML 1.1 reads a bare off as false
		} else if m, ok := scalarString(n); ok && (m == SandboxWorkspaceWrite || m == SandboxReadOnly || m == SandboxOff) {
			s.Mode = m
		} else {
			v.errorf(n, "sandbox.mode: want workspace-write, read-only or off, got %s", describe(n))
		}
	}
	if !r.mapping {
		return s
	}
	s.Hide = v.paths(r.Hide.n, "sandbox.hide", true)
	s.Writable = v.paths(r.Writable.n, "sandbox.writable", true)
	if n := r.Network.n; n != nil {
		if b, ok := boolValue(n); ok {
			s.Network = b
		} else if t, ok := scalarString(n); ok && (t == "on" || t == "off") {
			s.Network = t == "on"
		} else {
			v.errorf(n, "sandbox.network: want on or off, got %s", describe(n))
		}
	}
	for _, w := range s.Writable {
		if w == "/" || w == "~" {
			v.errorf(r.Writable.n, "sandbox.writable: %q would make everything it holds writable, warden's own files and shell start-up files included; list narrower directories", w)
		}
	}
	return s
}
