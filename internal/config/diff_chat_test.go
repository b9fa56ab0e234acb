package config

import "testing"

// TestDiffChatAllowlists: adding an approver widens; removing one does
// not.
func TestDiffChatAllowlists(t *testing.T) {
	o, n := Default(), Default()
	o.Chat.Telegram.Approvers.Users = []string{"1"}
	n.Chat.Telegram.Approvers.Users = []string{"1", "2"}
	cs := Diff(o, n)
	if len(cs) != 1 || cs[0].Key != "chat.telegram.approvers.users" || !cs[0].Widens {
		t.Fatalf("added approver: %+v", cs)
	}
	if cs := Diff(n, o); len(cs) != 1 || cs[0].Widens {
		t.Fatalf("removed approver: %+v", cs)
	}
	n = Default()
	n.Chat.Discord.Chats = []ChatOverride{{ID: "9", Admins: &Allowlist{Users: []string{"3"}}}}
	if cs := Diff(Default(), n); len(cs) != 1 || cs[0].Key != "chat.discord.chats.9.admins.users" || !cs[0].Widens {
		t.Fatalf("added chat admin: %+v", cs)
	}
}
