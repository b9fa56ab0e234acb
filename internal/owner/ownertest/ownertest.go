// Package ownertest builds owners for tests: the common attended and
// unattended ones, and owners read from the notation with an answer
// channel attached. It is imported by _test.go files only
// (internal/archtest enforces that for every package named *test).
package ownertest

import (
	"fmt"
	"strings"

	"github.com/wardenhq/warden/internal/owner"
)

// Channel is an answer channel that only names its surface: what the
// gate needs to take an attended owner's path. It answers nothing
// itself; tests answer through the broker.
type Channel string

// Surface implements owner.AnswerChannel.
func (c Channel) Surface() string { return string(c) }

// Must returns o, or panics with err: for owners built from constants.
func Must(o owner.Owner, err error) owner.Owner {
	if err != nil {
		panic(err)
	}
	return o
}

// Web is the attended web-console session key (gateway:web/KEY with
// session KEY and a "web" channel).
func Web(key string) owner.Owner {
	o := Must(owner.Gateway("web", key, ""))
	o = Must(o.WithSession(key))
	return Must(o.WithChannel(Channel("web")))
}

// Cron is run r-JOB of cron job, in session cron:JOB, with no channel.
func Cron(job string) owner.Owner {
	o := Must(owner.Cron(job, "r-"+job))
	return Must(o.WithSession("cron:" + job))
}

// Kanban is run r-TASK of task on board b, in session kanban:TASK, with
// no channel.
func Kanban(task string) owner.Owner {
	o := Must(owner.Kanban("b", task, "r-"+task))
	return Must(o.WithSession("kanban:" + task))
}

// Parse reads an owner in the notation (owner.Parse); a trailing
// " @SURFACE" attaches Channel(SURFACE), so "cli,session=t1 @terminal" is
// an attended terminal session. "none" is the zero Owner.
func Parse(s string) (owner.Owner, error) {
	s = strings.TrimSpace(s)
	if s == "none" {
		return owner.Owner{}, nil
	}
	notation, surface, attended := strings.Cut(s, " @")
	o, err := owner.Parse(strings.TrimSpace(notation))
	if err != nil {
		return owner.Owner{}, err
	}
	if !attended {
		return o, nil
	}
	surface = strings.TrimSpace(surface)
	if surface == "" {
		return owner.Owner{}, fmt.Errorf("owner %q: empty surface after @", s)
	}
	return o.WithChannel(Channel(surface))
}
