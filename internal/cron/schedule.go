package cron

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	robfig "github.com/robfig/cron/v3"
)

// ErrSchedule is wrapped by every Parse error.
var ErrSchedule = errors.New("bad schedule")

// searchYears bounds how far Next looks for a slot: long enough for
// Feb 29 on a given weekday-free spec (at most 8 years apart).
const searchYears = 10

// allHours is the hour field matching every hour.
const allHours = 1<<24 - 1

// Schedule says when a job fires. It is an immutable value; the zero
// Schedule never fires.
type Schedule struct {
	spec string
	loc  *time.Location
	// every is the period of an @every schedule; zero for a calendar.
	every time.Duration
	// The calendar's fields as robfig/cron bit sets (bit n set: value
	// n matches; dom and dow carry robfig's star bit).
	sec, min, hour, dom, month, dow uint64
	// hourly: the hour field matches every hour, so the schedule
	// follows elapsed time across a DST change (see Next).
	hourly bool
}

// descriptor returns the 6-field form of a robfig/cron @name other than
// @every, or "" for an unknown name.
func descriptor(name string) string {
	switch name {
	case "@yearly", "@annually":
		return "0 0 0 1 1 *"
	case "@monthly":
		return "0 0 0 1 * *"
	case "@weekly":
		return "0 0 0 * * 0"
	case "@daily", "@midnight":
		return "0 0 0 * * *"
	case "@hourly":
		return "0 0 * * * *"
	}
	return ""
}

// Parse reads a job's schedule:
//
//   - 5 fields, "minute hour day-of-month month day-of-week", or 6 with
//     seconds first, in robfig/cron syntax (ranges, steps, lists, names
//     such as MON-FRI and JAN);
//   - a descriptor: @yearly (@annually), @monthly, @weekly, @daily
//     (@midnight), @hourly, or @every DURATION (whole seconds, at least
//     1s, e.g. "@every 5m", "@every 1h30m");
//   - either one after a CRON_TZ=ZONE or TZ=ZONE prefix.
//
// tz is the IANA time zone the schedule is read in ("" means UTC). It
// may be given with a prefix only if they name the same zone. "Local"
// is refused: a stored job must mean the same on every host.
func Parse(spec, tz string) (Schedule, error) {
	s, err := parse(spec, tz)
	if err != nil {
		return Schedule{}, fmt.Errorf("%w %q: %w", ErrSchedule, spec, err)
	}
	return s, nil
}

func parse(spec, tz string) (Schedule, error) {
	body := strings.TrimSpace(spec)
	zone := strings.TrimSpace(tz)
	for _, p := range []string{"CRON_TZ=", "TZ="} {
		if !strings.HasPrefix(body, p) {
			continue
		}
		name, rest := body[len(p):], ""
		if i := strings.IndexFunc(name, unicode.IsSpace); i >= 0 {
			name, rest = name[:i], strings.TrimSpace(name[i:])
		}
		switch {
		case name == "":
			return Schedule{}, fmt.Errorf("%s names no time zone", p)
		case rest == "":
			return Schedule{}, fmt.Errorf("no schedule after %s%s", p, name)
		case zone != "" && zone != name:
			return Schedule{}, fmt.Errorf("the schedule says %s%s but the job's time zone is %s; give one", p, name, zone)
		}
		body, zone = rest, name
		break
	}
	loc, err := loadZone(zone)
	if err != nil {
		return Schedule{}, err
	}
	s := Schedule{spec: strings.TrimSpace(spec), loc: loc}
	if body == "" {
		return Schedule{}, errors.New("empty schedule")
	}
	if strings.HasPrefix(body, "@") {
		name, arg, _ := strings.Cut(body, " ")
		arg = strings.TrimSpace(arg)
		switch {
		case name == "@every":
			if s.every, err = parseEvery(arg); err != nil {
				return Schedule{}, err
			}
			return s, nil
		case name == "@reboot":
			return Schedule{}, errors.New("@reboot is not supported (a job missed while the host was down runs once at start; see catch-up)")
		case descriptor(name) == "":
			return Schedule{}, fmt.Errorf("unknown descriptor %s (want @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every DURATION)", name)
		case arg != "":
			return Schedule{}, fmt.Errorf("%s takes nothing after it, got %q", name, arg)
		}
		body = descriptor(name)
	}
	if err := s.parseFields(body); err != nil {
		return Schedule{}, err
	}
	if s.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return Schedule{}, errors.New("it never fires (no such day)")
	}
	return s, nil
}

func loadZone(name string) (*time.Location, error) {
	switch name {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return nil, errors.New(`time zone "Local" depends on the host; name an IANA zone such as Europe/Berlin`)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q (want an IANA name such as America/New_York): %w", name, err)
	}
	return loc, nil
}

func parseEvery(arg string) (time.Duration, error) {
	if arg == "" {
		return 0, errors.New("@every needs a duration, e.g. @every 5m")
	}
	d, err := time.ParseDuration(arg)
	switch {
	case err != nil:
		return 0, fmt.Errorf("@every %s: want a duration such as 90s, 5m or 1h30m", arg)
	case d < time.Second:
		return 0, fmt.Errorf("@every %s: the period must be at least 1s", arg)
	case d%time.Second != 0:
		return 0, fmt.Errorf("@every %s: the period must be whole seconds", arg)
	}
	return d, nil
}

func (s *Schedule) parseFields(body string) error {
	fields := strings.Fields(body)
	if n := len(fields); n != 5 && n != 6 {
		return fmt.Errorf("%d fields: want 5 (minute hour day-of-month month day-of-week) or 6 (seconds first)", n)
	}
	// robfig/cron parses the fields (only the fields: descriptors and
	// time zones are read above, for clearer errors and because its TZ=
	// handling panics on a prefix with nothing after it).
	p := robfig.NewParser(robfig.SecondOptional | robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month | robfig.Dow)
	parsed, err := p.Parse(strings.Join(fields, " "))
	if err != nil {
		// Parse each field alone to say which one is wrong.
		names := [6]string{"second", "minute", "hour", "day-of-month", "month", "day-of-week"}
		opts := [6]robfig.ParseOption{robfig.Second, robfig.Minute, robfig.Hour, robfig.Dom, robfig.Month, robfig.Dow}
		full := fields
		if len(full) == 5 {
			full = append([]string{"0"}, fields...)
		}
		for i, f := range full {
			if _, ferr := robfig.NewParser(opts[i]).Parse(f); ferr != nil {
				return fmt.Errorf("%s field %q: %w", names[i], f, ferr)
			}
		}
		return err
	}
	spec, ok := parsed.(*robfig.SpecSchedule)
	if !ok {
		return fmt.Errorf("unexpected schedule type %T", parsed)
	}
	s.sec, s.min, s.hour, s.dom, s.month, s.dow = spec.Second, spec.Minute, spec.Hour, spec.Dom, spec.Month, spec.Dow
	s.hourly = s.hour&allHours == allHours
	return nil
}

// String returns the spec as given to Parse.
func (s Schedule) String() string { return s.spec }

// Location is the time zone the schedule is read in.
func (s Schedule) Location() *time.Location {
	if s.loc == nil {
		return time.UTC
	}
	return s.loc
}

// Next returns the first slot strictly after after, or the zero time if
// there is none within ten years (or s is the zero Schedule). Slots
// are whole seconds.
//
// An @every schedule fires every period after after (rounded down to
// the second), whatever the wall clock says.
//
// A calendar schedule matches wall-clock times in its zone; where DST
// makes the wall clock jump, it follows these rules:
//
//   - Spring forward (a wall-clock hour does not exist): a time-of-day
//     slot inside the gap fires at the first instant after it, like
//     Vixie cron: "30 2 * * *" in New York fires at 03:00 EDT on
//     2026-03-08. Several such slots of one gap fire once.
//   - Fall back (a wall-clock hour happens twice): a time-of-day slot in
//     the repeated hour fires once, at its first occurrence: "30 1 * *
//     *" fires at 01:30 EDT on 2026-11-01 and not at 01:30 EST.
//   - A schedule whose hour field matches every hour ("0 * * * *",
//     "*/15 * * * *", @hourly) is about elapsed time, not a time of day:
//     it fires in both occurrences of a repeated hour (01:00 EDT and
//     01:00 EST are an hour apart) and has nothing to catch up in a gap
//     (01:00 EST is followed by 03:00 EDT, an hour later).
func (s Schedule) Next(after time.Time) time.Time {
	switch {
	case s.every > 0:
		return after.Add(s.every - time.Duration(after.Nanosecond()))
	case s.month == 0:
		return time.Time{}
	}
	loc := s.Location()
	from := after.Truncate(time.Second).Add(time.Second) // the first candidate instant
	limit := from.In(loc).Year() + searchYears
	for {
		t := from.In(loc)
		if t.Year() > limit {
			return time.Time{}
		}
		// Within [start, end) the zone's offset is constant, so wall
		// clock and instant map one to one.
		start, end := t.ZoneBounds()
		off := offset(t)
		c := wall(t, off)
		if !s.hourly && !start.IsZero() {
			// Fall back: wall-clock times the previous period already
			// showed are not slots again.
			if prev := offset(start.Add(-time.Nanosecond).In(loc)); prev > off {
				if seen := wall(start, prev); c.Before(seen) {
					c = seen
				}
			}
		}
		m, ok := s.match(c, limit)
		if !ok {
			return time.Time{}
		}
		if end.IsZero() {
			return m.Add(-off).In(loc)
		}
		periodEnd := wall(end, off)
		if m.Before(periodEnd) {
			return m.Add(-off).In(loc)
		}
		// m lies past this period. Spring forward: wall-clock times in
		// [periodEnd, gapEnd) never happen; a time-of-day slot there
		// fires at the first instant after the gap.
		if next := offset(end.In(loc)); !s.hourly && next > off {
			if gapEnd := wall(end, next); m.Before(gapEnd) {
				return end.In(loc)
			}
		}
		from = end
	}
}

// offset is t's zone offset.
func offset(t time.Time) time.Duration {
	_, off := t.Zone()
	return time.Duration(off) * time.Second
}

// wall is the wall-clock reading of t at offset off, as a UTC time
// (the "civil" time arithmetic below runs in UTC, which has no DST).
func wall(t time.Time, off time.Duration) time.Time {
	return t.UTC().Add(off)
}

// match returns the first wall-clock time at or after c (a UTC time
// standing for a wall clock) that the calendar fields match, looking no
// further than the end of year limit.
func (s Schedule) match(c time.Time, limit int) (time.Time, bool) {
	t := c.Truncate(time.Second)
	if t.Before(c) {
		t = t.Add(time.Second)
	}
	for t.Year() <= limit {
		switch {
		case s.month&(1<<uint(t.Month())) == 0:
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		case !s.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
		case s.hour&(1<<uint(t.Hour())) == 0:
			t = t.Truncate(time.Hour).Add(time.Hour)
		case s.min&(1<<uint(t.Minute())) == 0:
			t = t.Truncate(time.Minute).Add(time.Minute)
		case s.sec&(1<<uint(t.Second())) == 0:
			t = t.Add(time.Second)
		default:
			return t, true
		}
	}
	return time.Time{}, false
}

// dayMatches is robfig/cron's rule: when day-of-month or day-of-week is
// "*", both must match; when both are restricted, either may.
func (s Schedule) dayMatches(t time.Time) bool {
	const star = 1 << 63
	dom := s.dom&(1<<uint(t.Day())) != 0
	dow := s.dow&(1<<uint(t.Weekday())) != 0
	if s.dom&star != 0 || s.dow&star != 0 {
		return dom && dow
	}
	return dom || dow
}

// Key names the slot at t for de-duplication (store.CronSlot.Key): for
// a time-of-day schedule its local wall-clock time, so a slot that a
// fall-back repeats has one key; for an hourly-or-finer schedule, whose
// repeated-hour slots are distinct, the wall-clock time with its
// offset; for @every, the instant.
func (s Schedule) Key(t time.Time) string {
	switch {
	case s.every > 0:
		return t.UTC().Format(time.RFC3339)
	case s.hourly:
		return t.In(s.Location()).Format(time.RFC3339)
	}
	return t.In(s.Location()).Format("2006-01-02T15:04:05")
}
