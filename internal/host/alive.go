package host

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/oklog/ulid/v2"
)

// newID names one broker of this process: a ULID and the process id, so
// a later host can tell a dead predecessor from a live neighbour (a
// `warden chat` sharing the state directory).
func newID(prefix string) string {
	return fmt.Sprintf("%s%s.%d", prefix, ulid.Make(), os.Getpid())
}

// alive reports whether the process named in a broker id still runs. An
// id it cannot read counts as dead: its requests get withdrawn, which is
// the safe direction.
func alive(id string) bool {
	i := strings.LastIndexByte(id, '.')
	if i < 0 {
		return false
	}
	pid, err := strconv.Atoi(id[i+1:])
	if err != nil || pid <= 0 {
		return false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
