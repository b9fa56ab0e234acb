// Command fakemcp is mcptest's fake MCP server as a stdio program, for
// tests that want a real subprocess without re-executing their own
// binary:
//
//	go build -o "$dir/fakemcp" ./internal/mcpclient/mcptest/cmd/fakemcp
//	fakemcp legacy          # confirm_delete elicits mid-call
//	fakemcp inputrequests   # confirm_delete returns InputRequests
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/wardenhq/warden/internal/mcpclient/mcptest"
)

func main() {
	style := ""
	if len(os.Args) > 1 {
		style = os.Args[1]
	}
	if err := mcptest.ServeStdio(context.Background(), style, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fakemcp:", err)
		os.Exit(1)
	}
}
