//go:build !linux

package dispatch

// undumpable is Linux-only; elsewhere the sandbox's profile keeps
// steps from tracing their worker.
func undumpable() {}
