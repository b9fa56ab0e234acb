//go:build race

package sandbox

// helperEnv is the helper's environment. A race-detector build (tests)
// sleeps a second at exit unless told not to; the helper's own
// environment never reaches the command.
var helperEnv = []string{"GORACE=atexit_sleep_ms=0"}
