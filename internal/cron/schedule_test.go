package cron

import (
	"errors"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, whatever the machine has

	"pgregory.net/rapid"
)

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func mustParse(t testing.TB, spec, tz string) Schedule {
	t.Helper()
	s, err := Parse(spec, tz)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParse(t *testing.T) {
	from := time.Date(2026, 3, 8, 1, 30, 0, 0, time.UTC) // a Sunday
	for _, tc := range []struct {
		spec, tz string
		// next is Next(from) in UTC, RFC 3339; or the error's text.
		next, err string
	}{
		{spec: "*/15 * * * *", next: "2026-03-08T01:45:00Z"},
		{spec: "0 9 * * MON-FRI", next: "2026-03-09T09:00:00Z"},
		{spec: "0 9 * * mon-fri", next: "2026-03-09T09:00:00Z"},
		{spec: "30 8 1 JAN,jul *", next: "2026-07-01T08:30:00Z"},
		{spec: "  0   0  *  *  *  ", next: "2026-03-09T00:00:00Z"},
		{spec: "*/10 * * * * *", next: "2026-03-08T01:30:10Z"},
		{spec: "5 0 * * * *", next: "2026-03-08T02:00:05Z"},
		{spec: "0 0 29 2 *", next: "2028-02-29T00:00:00Z"},
		{spec: "0 0 1 * 1", next: "2026-03-09T00:00:00Z"}, // day 1 or Monday
		{spec: "0 0 ? * 1", next: "2026-03-09T00:00:00Z"},
		{spec: "@every 90s", next: "2026-03-08T01:31:30Z"},
		{spec: "@every 1h30m", next: "2026-03-08T03:00:00Z"},
		{spec: "@daily", next: "2026-03-09T00:00:00Z"},
		{spec: "@midnight", next: "2026-03-09T00:00:00Z"},
		{spec: "@hourly", next: "2026-03-08T02:00:00Z"},
		{spec: "@weekly", next: "2026-03-15T00:00:00Z"},
		{spec: "@monthly", next: "2026-04-01T00:00:00Z"},
		{spec: "@yearly", next: "2027-01-01T00:00:00Z"},
		{spec: "@annually", next: "2027-01-01T00:00:00Z"},
		{spec: "CRON_TZ=America/New_York 0 9 * * *", next: "2026-03-08T13:00:00Z"},
		{spec: "TZ=Asia/Tokyo 30 8 * * *", next: "2026-03-08T23:30:00Z"},
		{spec: "CRON_TZ=Asia/Tokyo @daily", next: "2026-03-08T15:00:00Z"},
		{spec: "0 9 * * *", tz: "America/New_York", next: "2026-03-08T13:00:00Z"},
		{spec: "CRON_TZ=America/New_York 0 9 * * *", tz: "America/New_York", next: "2026-03-08T13:00:00Z"},
		{spec: "0 9 * * *", tz: "UTC", next: "2026-03-08T09:00:00Z"},

		{spec: "", err: "empty schedule"},
		{spec: "   ", err: "empty schedule"},
		{spec: "* * * *", err: "4 fields: want 5"},
		{spec: "* * * * * * *", err: "7 fields: want 5"},
		{spec: "60 * * * *", err: `minute field "60"`},
		{spec: "0 24 * * *", err: `hour field "24"`},
		{spec: "0 0 0 * *", err: `day-of-month field "0"`},
		{spec: "0 0 * 13 *", err: `month field "13"`},
		{spec: "0 0 * * 8", err: `day-of-week field "8"`},
		{spec: "61 0 0 * * *", err: `second field "61"`},
		{spec: "*/0 * * * *", err: "step of range should be a positive number"},
		{spec: "5-1 * * * *", err: "beginning of range (5) beyond end of range (1)"},
		{spec: "x * * * *", err: `minute field "x"`},
		{spec: "0 0 * * FOO", err: `day-of-week field "FOO"`},
		{spec: "0 0 31 2 *", err: "never fires"},
		{spec: "0 0 30,31 2 *", err: "never fires"},
		{spec: "@every", err: "@every needs a duration"},
		{spec: "@every 5", err: "want a duration such as"},
		{spec: "@every 500ms", err: "at least 1s"},
		{spec: "@every -5m", err: "at least 1s"},
		{spec: "@every 1.5s", err: "whole seconds"},
		{spec: "@fortnightly", err: "unknown descriptor @fortnightly"},
		{spec: "@daily 9", err: "@daily takes nothing after it"},
		{spec: "@reboot", err: "@reboot is not supported"},
		{spec: "TZ=America/New_York", err: "no schedule after TZ=America/New_York"},
		{spec: "CRON_TZ=", err: "CRON_TZ= names no time zone"},
		{spec: "CRON_TZ= 0 9 * * *", err: "CRON_TZ= names no time zone"},
		{spec: "TZ=Mars/Olympus 0 9 * * *", err: `unknown time zone "Mars/Olympus"`},
		{spec: "0 9 * * *", tz: "Mars/Olympus", err: `unknown time zone "Mars/Olympus"`},
		{spec: "0 9 * * *", tz: "Local", err: `"Local" depends on the host`},
		{spec: "CRON_TZ=Asia/Tokyo 0 9 * * *", tz: "Europe/Berlin", err: "says CRON_TZ=Asia/Tokyo but the job's time zone is Europe/Berlin"},
	} {
		t.Run(tc.spec+"|"+tc.tz, func(t *testing.T) {
			s, err := Parse(tc.spec, tc.tz)
			if tc.err != "" {
				if err == nil {
					t.Fatalf("no error; Next = %v", s.Next(from))
				}
				if !errors.Is(err, ErrSchedule) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %q, want ErrSchedule containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Next(from).UTC().Format(time.RFC3339); got != tc.next {
				t.Errorf("Next(%v) = %s, want %s", from, got, tc.next)
			}
			if s.String() != strings.TrimSpace(tc.spec) {
				t.Errorf("String() = %q", s.String())
			}
		})
	}
}

func TestZeroScheduleNeverFires(t *testing.T) {
	if got := (Schedule{}).Next(time.Now()); !got.IsZero() {
		t.Errorf("zero Schedule: Next = %v", got)
	}
}

// firings returns the first n slots after from.
func firings(s Schedule, from time.Time, n int) []string {
	var out []string
	t := from
	for range n {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t.In(s.Location()).Format("2006-01-02 15:04:05 MST"))
	}
	return out
}

func sameList(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestDST pins down the DST rules of Schedule.Next on America/New_York
// in 2026: spring forward on 03-08 (02:00 EST → 03:00 EDT), fall back
// on 11-01 (02:00 EDT → 01:00 EST).
func TestDST(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	at := func(s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", s, ny)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, tc := range []struct {
		name, spec string
		from       string
		want       []string
	}{
		{"a daily slot in the spring gap fires after it", "30 2 * * *", "2026-03-07 12:00", []string{
			"2026-03-08 03:00:00 EDT", "2026-03-09 02:30:00 EDT", "2026-03-10 02:30:00 EDT"}},
		{"a daily slot on the gap's edge", "0 2 * * *", "2026-03-07 12:00", []string{
			"2026-03-08 03:00:00 EDT", "2026-03-09 02:00:00 EDT"}},
		{"two gap slots and the slot after the gap fire once", "0,30 2,3 * * *", "2026-03-08 00:00", []string{
			"2026-03-08 03:00:00 EDT", "2026-03-08 03:30:00 EDT", "2026-03-09 02:00:00 EDT"}},
		{"a slot after the gap is untouched", "30 3 * * *", "2026-03-07 12:00", []string{
			"2026-03-08 03:30:00 EDT", "2026-03-09 03:30:00 EDT"}},
		{"a daily slot in the repeated hour fires once", "30 1 * * *", "2026-10-31 12:00", []string{
			"2026-11-01 01:30:00 EDT", "2026-11-02 01:30:00 EST", "2026-11-03 01:30:00 EST"}},
		{"every ten minutes of 1am, once", "*/10 1 * * *", "2026-11-01 00:55", []string{
			"2026-11-01 01:00:00 EDT", "2026-11-01 01:10:00 EDT", "2026-11-01 01:20:00 EDT",
			"2026-11-01 01:30:00 EDT", "2026-11-01 01:40:00 EDT", "2026-11-01 01:50:00 EDT",
			"2026-11-02 01:00:00 EST"}},
		{"the hour after the repeat", "0 2 * * *", "2026-10-31 12:00", []string{
			"2026-11-01 02:00:00 EST", "2026-11-02 02:00:00 EST"}},
		{"hourly fires in both 1am hours", "0 * * * *", "2026-10-31 23:30", []string{
			"2026-11-01 00:00:00 EDT", "2026-11-01 01:00:00 EDT", "2026-11-01 01:00:00 EST",
			"2026-11-01 02:00:00 EST", "2026-11-01 03:00:00 EST"}},
		{"@hourly is hourly", "@hourly", "2026-11-01 00:30", []string{
			"2026-11-01 01:00:00 EDT", "2026-11-01 01:00:00 EST", "2026-11-01 02:00:00 EST"}},
		{"every 15 minutes keeps its pace through the repeat", "*/15 * * * *", "2026-11-01 01:40", []string{
			"2026-11-01 01:45:00 EDT", "2026-11-01 01:00:00 EST", "2026-11-01 01:15:00 EST"}},
		{"hourly has no gap to catch up", "0 * * * *", "2026-03-08 00:30", []string{
			"2026-03-08 01:00:00 EST", "2026-03-08 03:00:00 EDT", "2026-03-08 04:00:00 EDT"}},
		{"half past every hour across the gap", "30 * * * *", "2026-03-08 00:45", []string{
			"2026-03-08 01:30:00 EST", "2026-03-08 03:30:00 EDT"}},
		{"every two hours is a time of day", "0 */2 * * *", "2026-03-07 23:30", []string{
			"2026-03-08 00:00:00 EST", "2026-03-08 03:00:00 EDT", "2026-03-08 04:00:00 EDT"}},
		{"@every ignores the wall clock", "@every 1h", "2026-11-01 00:30", []string{
			"2026-11-01 01:30:00 EDT", "2026-11-01 01:30:00 EST", "2026-11-01 02:30:00 EST"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.spec, "America/New_York")
			sameList(t, firings(s, at(tc.from), len(tc.want)), tc.want)
		})
	}
	t.Run("from inside the repeated hour", func(t *testing.T) {
		s := mustParse(t, "30 1 * * *", "America/New_York")
		// 01:10 EST: 01:30 EDT has passed, 01:30 EST is the repeat.
		from := time.Date(2026, 11, 1, 6, 10, 0, 0, time.UTC)
		sameList(t, firings(s, from, 1), []string{"2026-11-02 01:30:00 EST"})
		// 01:40 EDT: the same.
		from = time.Date(2026, 11, 1, 5, 40, 0, 0, time.UTC)
		sameList(t, firings(s, from, 1), []string{"2026-11-02 01:30:00 EST"})
	})
	t.Run("keys", func(t *testing.T) {
		daily := mustParse(t, "30 1 * * *", "America/New_York")
		hourly := mustParse(t, "0 * * * *", "America/New_York")
		edt, est := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC)
		if a, b := daily.Key(edt), daily.Key(est); a != b || a != "2026-11-01T01:30:00" {
			t.Errorf("daily keys %q and %q: want one wall-clock key for the repeated slot", a, b)
		}
		if a, b := hourly.Key(edt), hourly.Key(est); a == b {
			t.Errorf("hourly keys are both %q: want the two hours apart", a)
		}
	})
}

// TestDSTElsewhere checks zones whose changes are not at 2am or not an
// hour: midnight in Santiago, half an hour on Lord Howe Island.
func TestDSTElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name, spec, tz string
		from           time.Time
		want           []string
	}{
		{"midnight does not exist in Santiago on 2026-09-06", "@daily", "America/Santiago",
			time.Date(2026, 9, 5, 12, 0, 0, 0, time.UTC), []string{
				"2026-09-06 01:00:00 -03", "2026-09-07 00:00:00 -03"}},
		{"Lord Howe springs forward half an hour", "15 2 * * *", "Australia/Lord_Howe",
			time.Date(2026, 10, 3, 0, 0, 0, 0, time.UTC), []string{
				"2026-10-04 02:30:00 +11", "2026-10-05 02:15:00 +11"}},
		{"Lord Howe falls back half an hour", "45 1 * * *", "Australia/Lord_Howe",
			time.Date(2026, 4, 4, 0, 0, 0, 0, time.UTC), []string{
				"2026-04-05 01:45:00 +11", "2026-04-06 01:45:00 +1030"}},
		{"hourly on Lord Howe's fall back", "50 * * * *", "Australia/Lord_Howe",
			time.Date(2026, 4, 4, 14, 0, 0, 0, time.UTC), []string{
				"2026-04-05 01:50:00 +11", "2026-04-05 01:50:00 +1030", "2026-04-05 02:50:00 +1030"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameList(t, firings(mustParse(t, tc.spec, tc.tz), tc.from, len(tc.want)), tc.want)
		})
	}
}

// TestNextAgainstBruteForce compares Next with a walk over every minute
// of a year in zones with DST, applying the rules literally: a
// time-of-day slot fires at the first minute whose wall clock shows it,
// or at the first minute after a gap that swallowed it; an hourly
// schedule fires at every minute whose wall clock matches.
func TestNextAgainstBruteForce(t *testing.T) {
	zones := []string{"America/New_York", "Europe/London", "Australia/Lord_Howe", "America/Santiago"}
	rapid.Check(t, func(rt *rapid.T) {
		zone := rapid.SampledFrom(zones).Draw(rt, "zone")
		minute := rapid.SampledFrom([]string{"0", "30", "*/15", "5,45", "*"}).Draw(rt, "minute")
		hour := rapid.SampledFrom([]string{"*", "0", "1", "2", "3", "1-3", "*/2", "23", "0,1"}).Draw(rt, "hour")
		if minute == "*" && hour == "*" {
			hour = "1"
		}
		spec := minute + " " + hour + " * * *"
		s, err := Parse(spec, zone)
		if err != nil {
			rt.Fatal(err)
		}
		// Windows of a day and a bit around each of the zone's changes
		// in 2026, and one quiet window.
		loc := s.Location()
		starts := []time.Time{time.Date(2026, 6, 10, 0, 0, 0, 0, loc)}
		for t := time.Date(2026, 1, 1, 0, 0, 0, 0, loc); t.Year() == 2026; {
			_, end := t.ZoneBounds()
			if end.IsZero() || end.Year() > 2026 {
				break
			}
			starts = append(starts, end.Add(-4*time.Hour).Truncate(time.Hour))
			t = end
		}
		for _, start := range starts {
			checkWindow(rt, s, spec, start, start.Add(32*time.Hour))
		}
	})
}

func checkWindow(rt *rapid.T, s Schedule, spec string, start, end time.Time) {
	var want []time.Time
	seen := map[time.Time]bool{} // wall clocks already shown
	// The wall clocks of the hours before count as shown.
	for tm := start.Add(-3 * time.Hour); tm.Before(start); tm = tm.Add(time.Minute) {
		seen[wall(tm, offset(tm))] = true
	}
	prevWall := time.Time{}
	for tm := start; tm.Before(end); tm = tm.Add(time.Minute) {
		w := wall(tm, offset(tm))
		fire := false
		if s.hourly {
			fire = s.matches(w)
		} else {
			fire = s.matches(w) && !seen[w]
			if !prevWall.IsZero() && w.Sub(prevWall) > time.Minute {
				for g := prevWall.Add(time.Minute); g.Before(w); g = g.Add(time.Minute) {
					if s.matches(g) && !seen[g] {
						fire = true
					}
				}
			}
		}
		seen[w] = true
		prevWall = w
		if fire {
			want = append(want, tm)
		}
	}
	got := []time.Time{}
	for tm := s.Next(start.Add(-time.Second)); tm.Before(end); tm = s.Next(tm) {
		got = append(got, tm)
	}
	if len(got) != len(want) {
		rt.Fatalf("%s in %s from %v: %d firings %v, brute force %d %v", spec, s.Location(), start, len(got), got, len(want), want)
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			rt.Fatalf("%s in %s: firing %d at %v, brute force %v", spec, s.Location(), i, got[i], want[i])
		}
	}
}

// matches reports whether the calendar fields match wall clock w.
func (s Schedule) matches(w time.Time) bool {
	m, ok := s.match(w, w.Year())
	return ok && m.Equal(w)
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"*/15 * * * *", "TZ=UTC 0 9 * * *", "CRON_TZ=", "TZ=", "@every 5m", "0 0 31 2 *", "1-2-3 * * * *", "*/ * * * *", "@daily"} {
		f.Add(s)
	}
	from := time.Date(2026, 3, 8, 1, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := Parse(spec, "")
		if err != nil {
			return
		}
		if n := s.Next(from); !n.IsZero() && !n.After(from) {
			t.Fatalf("%q: Next(%v) = %v, not after", spec, from, n)
		}
	})
}
