//go:build !linux

package sandbox

import "os"

// procID names a process; without /proc only its pid is known.
type procID struct {
	pid   int
	start uint64
	boot  string
}

func self() (procID, error) { return procID{pid: os.Getpid()}, nil }

// procStart is unknown without /proc: 0.
func procStart(int) (uint64, error) { return 0, nil }

func bootID() string { return "" }
