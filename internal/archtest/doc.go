// Package archtest holds tests about the shape of the code base: which
// packages may touch the process environment and which may not, and
// which package may import which (layers_test.go).
package archtest

// module is the module path of the code base.
const module = "github.com/wardenhq/warden"
