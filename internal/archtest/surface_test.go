package archtest

import (
	"path/filepath"
	"strings"
	"testing"
)

// chatSurfaces are the chat surfaces' packages: they reach the host
// only through internal/surface.
var chatSurfaces = []string{"surface", filepath.Join("surface", "chat"), filepath.Join("surface", "discord"),
	filepath.Join("surface", "slack"), filepath.Join("surface", "telegram"), filepath.Join("surface", "notify")}

// TestChatSurfacesTalkToTheHostOnly: a chat surface never reaches past
// the host's surface interface — not the runner (which runs what the
// gate allowed), not the store's implementation, the scheduler, the
// board, the dispatcher or the host itself — and never reads the
// process environment (its tokens come from the host, by reference).
func TestChatSurfacesTalkToTheHostOnly(t *testing.T) {
	banned := []string{"internal/runner", "internal/store/sqlite", "internal/cron", "internal/board", "internal/dispatch",
		"internal/host", "internal/agent", "internal/gate", "internal/shellstate", "internal/localapi", "internal/workerapi"}
	for _, p := range chatSurfaces {
		dir := filepath.Join("..", p)
		t.Run(p, func(t *testing.T) {
			checkNoEnvironment(t, dir)
			packageGo(t, dir, func(f goFile) {
				for _, path := range f.imports() {
					for _, b := range banned {
						if path == "github.com/wardenhq/warden/"+b {
							t.Errorf("%s imports %s: surfaces talk to the host through internal/surface only", f.Path, path)
						}
					}
				}
			})
		})
	}
}

// TestChatClientsStayInTheirAdapters: each platform's client library is
// imported by its adapter alone (and gorilla/websocket by the fakes that
// serve its protocol), so the rest of warden never grows a second path
// to a platform.
func TestChatClientsStayInTheirAdapters(t *testing.T) {
	owners := map[string]string{
		"github.com/bwmarrin/discordgo":                      filepath.Join("surface", "discord"),
		"github.com/slack-go/slack":                          filepath.Join("surface", "slack"),
		"github.com/go-telegram-bot-api/telegram-bot-api/v5": filepath.Join("surface", "telegram"),
	}
	root := ".."
	checked := walkImports(t, root, true, func(path string, imports []string) {
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, p := range imports {
			for lib, owner := range owners {
				if (p == lib || strings.HasPrefix(p, lib+"/")) && rel != owner {
					t.Errorf("%s imports %s; only internal/%s may", path, p, owner)
				}
			}
		}
	})
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}
