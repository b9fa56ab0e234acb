package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClientMain is the script program "mcpclient TOOL ARGS_JSON": an MCP
// client (the go-sdk's) named test-agent that starts `warden mcp` as its
// server over stdio, calls TOOL with ARGS_JSON, and prints the result's
// text and then "error: true|false". It exits 1 if the call itself fails.
//
// MCPCLIENT_ELICIT makes it a client that can elicit (form mode), whose
// user answers every question as the variable says: "approve", or
// "deny:REASON"; it prints each question to stderr as "asked: MESSAGE".
// MCPCLIENT_PROTOCOL pins the protocol version it asks for.
func mcpClientMain() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mcpclient TOOL ARGS_JSON")
		os.Exit(3)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(os.Args[2]), &args); err != nil {
		fmt.Fprintln(os.Stderr, "mcpclient: args:", err)
		os.Exit(3)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command("warden", "mcp")
	// The server's environment is built, not inherited (invariant 3):
	// what warden mcp needs to find the host, and nothing else.
	for _, k := range []string{"PATH", "HOME", "WARDEN_STATE", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "GORACE"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Stderr = os.Stderr
	var opts mcp.ClientOptions
	if how := os.Getenv("MCPCLIENT_ELICIT"); how != "" {
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Fprintf(os.Stderr, "asked: %s\n", req.Params.Message)
			if how == "approve" {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false, "reason": strings.TrimPrefix(how, "deny:")}}, nil
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, &opts).Connect(ctx, &mcp.CommandTransport{Command: cmd},
		&mcp.ClientSessionOptions{ProtocolVersion: os.Getenv("MCPCLIENT_PROTOCOL")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpclient: connect:", err)
		os.Exit(1)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: os.Args[1], Arguments: args})
	cs.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpclient: call:", err)
		os.Exit(1)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	fmt.Println(text.String())
	fmt.Printf("error: %v\n", res.IsError)
}
