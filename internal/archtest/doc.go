// Package archtest holds tests about the shape of the code base: which
// packages may touch the process environment and which may not.
package archtest
