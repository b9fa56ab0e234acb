//go:build !race

package sandbox

// helperEnv is the helper's environment: nothing (it never reaches the
// command, which gets Spec.Env).
var helperEnv = []string{}
