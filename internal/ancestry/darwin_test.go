package ancestry

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// kinfo builds a struct kinfo_proc as macOS's sysctl kern.proc.pid
// returns it (LP64, little-endian), with the fields this package reads
// at their documented offsets and the rest filled with noise, so a
// parser reading the wrong offset sees garbage.
func kinfo(pid, ppid, pgid int32, comm string, stat int8, sec int64, usec int32) []byte {
	b := make([]byte, 648)
	for i := range b {
		b[i] = 0xA5
	}
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(sec))   // p_starttime.tv_sec
	le.PutUint32(b[8:], uint32(usec))  // p_starttime.tv_usec
	b[36] = byte(stat)                 // p_stat
	le.PutUint32(b[40:], uint32(pid))  // p_pid
	copy(b[243:260], make([]byte, 17)) // p_comm, NUL-padded
	copy(b[243:260], comm)
	le.PutUint32(b[560:], uint32(ppid)) // e_ppid
	le.PutUint32(b[564:], uint32(pgid)) // e_pgid
	return b
}

func TestParseKinfoProc(t *testing.T) {
	const sRun = 2
	p, err := parseKinfoProc(kinfo(4242, 4000, 4100, "zsh", sRun, 1_700_000_000, 123456))
	if err != nil {
		t.Fatal(err)
	}
	want := Proc{PID: 4242, PPID: 4000, PGID: 4100, Comm: "zsh", Start: 1_700_000_000_123_456}
	if p != want {
		t.Errorf("parseKinfoProc = %+v, want %+v", p, want)
	}
	// p_comm holds MAXCOMLEN (16) bytes and a NUL; a full name is read
	// whole and nothing past it.
	long := strings.Repeat("x", 16)
	if p, err := parseKinfoProc(kinfo(7, 1, 7, long, sRun, 1, 0)); err != nil || p.Comm != long {
		t.Errorf("16-byte comm: %q, %v", p.Comm, err)
	}
	// launchd: pid 1, no parent.
	if p, err := parseKinfoProc(kinfo(1, 0, 1, "launchd", sRun, 1, 0)); err != nil || p.PPID != 0 {
		t.Errorf("launchd: %+v, %v", p, err)
	}

	for name, tc := range map[string]struct {
		b    []byte
		want string
	}{
		"no process (sysctl answers with nothing)": {nil, "no such process"},
		"zombie":        {kinfo(9, 1, 9, "defunct", sZomb, 1, 0), "zombie"},
		"short":         {kinfo(9, 1, 9, "a", sRun, 1, 0)[:600], "600 bytes"},
		"long":          {append(kinfo(9, 1, 9, "a", sRun, 1, 0), 0), "649 bytes"},
		"pid 0":         {kinfo(0, 0, 0, "kernel_task", sRun, 1, 0), "pid 0"},
		"negative ppid": {kinfo(9, -3, 9, "a", sRun, 1, 0), "ppid -3"},
		"bad usec":      {kinfo(9, 1, 9, "a", sRun, 1, 1_000_000), "start time"},
	} {
		_, err := parseKinfoProc(tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.want)
		}
	}
	if _, err := parseKinfoProc(nil); !errors.Is(err, errNoProcess) {
		t.Errorf("empty answer: %v, want errNoProcess", err)
	}
}

// xucred builds a struct xucred as LOCAL_PEERCRED fills it.
func xucred(version, uid uint32, groups ...uint32) []byte {
	b := make([]byte, 76)
	le := binary.LittleEndian
	le.PutUint32(b[0:], version)
	le.PutUint32(b[4:], uid)
	le.PutUint16(b[8:], uint16(int16(len(groups))))
	b[10], b[11] = 0xA5, 0xA5 // padding
	for i, g := range groups {
		if i < 16 {
			le.PutUint32(b[12+4*i:], g)
		}
	}
	return b
}

func TestParseXucred(t *testing.T) {
	c, err := parseXucred(xucred(0, 501, 20, 12, 61, 79), 4242)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Cred{PID: 4242, UID: 501, GID: 20}); c != want {
		t.Errorf("parseXucred = %+v, want %+v (gid is cr_groups[0])", c, want)
	}
	if c, err := parseXucred(xucred(0, 0, 0), 1); err != nil || c.UID != 0 || c.GID != 0 {
		t.Errorf("root: %+v, %v", c, err)
	}
	sixteen := make([]uint32, 16)
	if _, err := parseXucred(xucred(0, 501, sixteen...), 7); err != nil {
		t.Errorf("16 groups (NGROUPS): %v", err)
	}
	for name, tc := range map[string]struct {
		b    []byte
		pid  int32
		want string
	}{
		"another version": {xucred(1, 501, 20), 7, "version 1"},
		"no groups":       {xucred(0, 501), 7, "0 groups"},
		"17 groups":       {xucred(0, 501, make([]uint32, 17)...), 7, "17 groups"},
		"short":           {xucred(0, 501, 20)[:40], 7, "40 bytes"},
		"no pid":          {xucred(0, 501, 20), 0, "pid 0"},
		"negative pid":    {xucred(0, 501, 20), -1, "pid -1"},
	} {
		_, err := parseXucred(tc.b, tc.pid)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.want)
		}
	}
}

// FuzzParseKinfoProc: no input panics, and whatever is accepted names a
// positive pid.
func FuzzParseKinfoProc(f *testing.F) {
	f.Add(kinfo(4242, 4000, 4100, "zsh", 2, 1_700_000_000, 5))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseKinfoProc(b)
		if err == nil && (p.PID <= 0 || p.PPID < 0 || len(p.Comm) > 17) {
			t.Fatalf("accepted %+v", p)
		}
	})
}
