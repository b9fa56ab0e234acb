// Package policy holds warden's compiled policy vocabulary: the approval
// modes of the config file, the verdicts rules produce, and user deny
// rules compiled from globs.
//
// Everything here is a pure function of its inputs. The package never
// reads the process environment, a clock or the file system: who is
// asking travels in a context (package owner), and what the operator
// configured arrives as arguments, compiled once per config load.
package policy
