package chat

import "slices"

// Allow is an allowlist: platform user ids and role ids. The empty list
// allows nobody.
type Allow struct {
	Users []string
	Roles []string
}

// has reports whether u is on the list. Bots never are.
func (a Allow) has(u User) bool {
	if u.Bot || u.ID == "" {
		return false
	}
	if slices.Contains(a.Users, u.ID) {
		return true
	}
	for _, r := range u.Roles {
		if r != "" && slices.Contains(a.Roles, r) {
			return true
		}
	}
	return false
}

// empty reports whether the list allows nobody.
func (a Allow) empty() bool { return len(a.Users) == 0 && len(a.Roles) == 0 }

// Rights are who may do what in a chat.
type Rights struct {
	// Approvers may answer requests once or for the session, and fill
	// in or decline MCP servers' forms.
	Approvers Allow
	// Admins may do what approvers do, approve always (a grant that
	// changes policy) and turn session yolo on or off.
	Admins Allow
	// Users may talk to the agent and run "!cmd"; the empty list means
	// the approvers and admins.
	Users Allow
}

// Access is a platform's rights, with per-chat overrides.
type Access struct {
	Rights
	// Chats override the platform's rights in one chat (by chat id): each
	// list given there replaces the platform's list for that chat.
	Chats map[string]ChatRights
}

// ChatRights are one chat's overrides; a nil list keeps the platform's.
type ChatRights struct {
	Approvers, Admins, Users *Allow
}

// in returns the rights in chat.
func (a Access) in(chat string) Rights {
	r := a.Rights
	if c, ok := a.Chats[chat]; ok {
		if c.Approvers != nil {
			r.Approvers = *c.Approvers
		}
		if c.Admins != nil {
			r.Admins = *c.Admins
		}
		if c.Users != nil {
			r.Users = *c.Users
		}
	}
	return r
}

// mayApprove reports whether u may answer once or for the session.
func (r Rights) mayApprove(u User) bool { return r.Approvers.has(u) || r.Admins.has(u) }

// mayAdmin reports whether u may approve always and switch yolo.
func (r Rights) mayAdmin(u User) bool { return r.Admins.has(u) }

// mayTalk reports whether u may talk to the agent and run commands.
func (r Rights) mayTalk(u User) bool {
	if r.Users.empty() {
		return r.mayApprove(u)
	}
	return r.Users.has(u) || r.mayApprove(u)
}

// Nobody reports whether no one at all may answer on this platform: a
// configuration that can only let requests expire.
func (a Access) Nobody() bool {
	if !a.Approvers.empty() || !a.Admins.empty() {
		return false
	}
	for _, c := range a.Chats {
		if (c.Approvers != nil && !c.Approvers.empty()) || (c.Admins != nil && !c.Admins.empty()) {
			return false
		}
	}
	return true
}
