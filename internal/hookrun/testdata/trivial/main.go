// Command trivial does nothing: the floor of a Go program's start, built
// beside warden-hook by the hook benchmark.
package main

func main() {}
