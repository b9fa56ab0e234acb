package localapi

import (
	"fmt"
	"strings"
)

// probeEnv names the socket a probe child (this test binary re-run)
// connects to; see TestMain.
const probeEnv = "WARDEN_TEST_PROBE_SOCKET"

// probeMain is the probe child: one GET over the admin socket, its
// status and body printed.
func probeMain(sock string) int {
	status, body, err := rawRequest(sock, "GET /v1/grants HTTP/1.1\r\nHost: warden.sock\r\n")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println(status, strings.TrimSpace(body))
	return 0
}
