package sqlite

import (
	"testing"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/storetest"
)

func TestBoardConformance(t *testing.T) {
	storetest.RunBoard(t, func(t *testing.T) store.BoardStore { return openTest(t) })
}

func TestCredentialsConformance(t *testing.T) {
	storetest.RunCredentials(t, func(t *testing.T) store.Credentials { return openTest(t) })
}

func TestChatPostsConformance(t *testing.T) {
	storetest.RunChatPosts(t, func(t *testing.T) store.ChatPosts { return openTest(t) })
}

func TestHostsConformance(t *testing.T) {
	storetest.RunHosts(t, func(t *testing.T) storetest.HostStore { return openTest(t) })
}

func TestFencedRunsConformance(t *testing.T) {
	storetest.RunFencedRuns(t, func(t *testing.T) storetest.FencedStore { return openTest(t) })
}
