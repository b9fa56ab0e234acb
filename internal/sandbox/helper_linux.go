package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// sysProcAttr starts the helper: in new user, mount, PID and IPC namespaces
// (and network, when it is off), mapped to uid and gid 0 inside so it
// holds the capabilities to build the view there, in a session (and so
// a process group) of its own, without a controlling terminal: nothing
// in it can push input into the operator's terminal (TIOCSTI). Mode
// off: only the session.
func sysProcAttr(confine, network bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true}
	if !confine {
		return a
	}
	// IPC too: System V shared memory, semaphores and message queues of
	// the host's user are out of reach.
	a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
	if !network {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	return a
}

// selfExe is the binary the helper is: this one, even if the file was
// replaced since it started.
func selfExe() string { return "/proc/self/exe" }

// setupError is a refusal by the kernel: the sandbox cannot work here,
// whatever the call.
type setupError struct{ error }

func setupf(format string, args ...any) error {
	return setupError{fmt.Errorf(format, args...)}
}

// confine is the helper in its namespaces: build the view, start the
// command in a nested user and mount namespace, and reap until it
// ends. It never returns before the command has ended, unless the
// command could not be started.
func confine(sp spec, lifeline, rep *os.File) int {
	pid, err := setupAndStart(sp)
	if err != nil {
		var se setupError
		if errors.As(err, &se) {
			report(rep, reportError+"setup: "+err.Error())
		} else {
			report(rep, reportError+err.Error())
		}
		return 125
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	go func() {
		for s := range sigs {
			_ = syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	go func() {
		// The host holds the other end for the life of the call: EOF
		// means it is gone. Everything in the namespace dies with us.
		_, _ = io.Copy(io.Discard, lifeline)
		os.Exit(137)
	}()
	report(rep, reportStarted)
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			report(rep, reportSignal+"9")
			return 137
		}
		if wpid != pid {
			continue // an orphan re-parented to us: reaped
		}
		if ws.Signaled() {
			report(rep, fmt.Sprintf("%s%d", reportSignal, int(ws.Signal())))
			return 128 + int(ws.Signal())
		}
		report(rep, fmt.Sprintf("%s%d", reportExit, ws.ExitStatus()))
		return ws.ExitStatus()
	}
}

// setupAndStart builds the view and starts the command; it returns the
// command's pid.
func setupAndStart(sp spec) (int, error) {
	// Nothing in the sandbox may trace the helper or read its memory.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return 0, setupf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	srcs, err := openSources(sp.View)
	if err != nil {
		return 0, err
	}
	defer func() {
		for _, fd := range srcs {
			unix.Close(fd)
		}
	}()
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return 0, setupf("make the mounts private: %w", err)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		if errors.Is(err, unix.ENOSYS) {
			return 0, setupf("mount_setattr: %w (Linux 5.12 or newer is needed)", err)
		}
		return 0, setupf("make the file system read-only: %w", err)
	}
	var seal []int // tmpfs mounts made read-only once the view is built
	defer func() {
		for _, fd := range seal {
			unix.Close(fd)
		}
	}()
	for _, o := range sp.View.Ops {
		fd, err := apply(o, srcs)
		if err != nil {
			return 0, fmt.Errorf("view: %s %s (%s): %w", o.Kind, o.Target, o.Why, err)
		}
		if fd >= 0 {
			seal = append(seal, fd)
		}
	}
	for _, fd := range seal {
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return 0, setupf("seal a hidden path: %w", err)
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return 0, setupf("mount a /proc for the new PID namespace: %w", err)
	}
	if err := guardProc(srcs[sp.View.Empty]); err != nil {
		return 0, setupf("guard /proc: %w", err)
	}
	if !sp.Network {
		if err := loopbackUp(); err != nil {
			return 0, setupf("bring up loopback in the new network namespace: %w", err)
		}
	}
	// From here on this goroutine keeps its thread: no_new_privs and
	// Landlock are set on it alone (cheaper than on every thread of the
	// helper), and the command is forked from it, inheriting both. The
	// thread is never unlocked: the runtime ends it with the helper.
	runtime.LockOSThread()
	// A new, empty session keyring: keys the host's session holds
	// (possessed, so readable) stay out of reach. Best effort: a kernel
	// without keys, or a container that refuses keyctl, has none to
	// inherit either way.
	if _, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); e != 0 && e != unix.ENOSYS && e != unix.EPERM {
		return 0, setupf("keyctl(KEYCTL_JOIN_SESSION_KEYRING): %w", e)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, setupf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := restrictLandlock(sp.View.Writable); err != nil {
		return 0, setupf("landlock: %w", err)
	}
	path, err := lookPath(sp.Path, sp.Env, sp.Dir)
	if err != nil {
		return 0, err
	}
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for i := range sp.Extra {
		files = append(files, os.NewFile(uintptr(3+i), "extra"))
	}
	// The command: a nested user namespace (the host's uid and gid,
	// mapped to ours, which is the host's) with a mount namespace of
	// its own, in which every mount above is locked: it cannot be
	// unmounted to uncover what it hides, nor made writable.
	p, err := os.StartProcess(path, append([]string{sp.argv0()}, sp.Args...), &os.ProcAttr{
		Dir: sp.Dir, Env: sp.Env, Files: files,
		Sys: &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: sp.UID, HostID: 0, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: sp.GID, HostID: 0, Size: 1}},
			Setsid:      true, // no controlling terminal (TIOCSTI)
		},
	})
	if err != nil {
		for _, k := range []error{syscall.EPERM, syscall.ENOSPC, syscall.EUSERS, syscall.EINVAL} {
			if errors.Is(err, k) {
				return 0, setupf("start the command in a nested user namespace: %w", err)
			}
		}
		return 0, err
	}
	pid := p.Pid
	_ = p.Release() // reaped by the loop, with every orphan
	return pid, nil
}

// openSources opens every bind source before anything is mounted,
// refusing a symlink anywhere in its path and a file that is not the
// one the host planned with.
func openSources(v view) ([]int, error) {
	var fds []int
	for i, src := range v.Sources {
		fd, err := openNoFollow(unix.AT_FDCWD, src)
		if err == nil && i < len(v.SourceIDs) {
			err = check(fd, v.SourceIDs[i])
		}
		if err != nil {
			if fd >= 0 {
				unix.Close(fd)
			}
			for _, f := range fds {
				unix.Close(f)
			}
			return nil, fmt.Errorf("view: open %s: %w", src, err)
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

// openNoFollow opens path as an O_PATH descriptor, refusing symlinks in
// every component.
func openNoFollow(dirfd int, path string) (int, error) {
	return unix.Openat2(dirfd, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// check compares fd's identity with want (a zero want checks nothing).
func check(fd int, want fileID) error {
	if want == (fileID{}) {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if uint64(st.Dev) != want.Dev || st.Ino != want.Ino {
		return errors.New("not the file the host planned with (was it replaced?)")
	}
	return nil
}

// apply runs one operation; for a tmpfs to seal later it returns the
// mount's descriptor, else -1.
func apply(o op, srcs []int) (int, error) {
	switch o.Kind {
	case opBind:
		if o.Source < 0 || o.Source >= len(srcs) {
			return -1, errors.New("no such source")
		}
		tfd, existed, err := openTarget(o.Target, o.File, !o.Optional)
		if err != nil {
			if o.Optional && errors.Is(err, unix.ENOENT) {
				return -1, nil
			}
			return -1, err
		}
		defer unix.Close(tfd)
		if existed {
			if err := check(tfd, o.Want); err != nil {
				return -1, err
			}
		}
		tree, err := unix.OpenTree(srcs[o.Source], "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
		if err != nil {
			return -1, fmt.Errorf("open_tree: %w", err)
		}
		defer unix.Close(tree)
		attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if o.Write {
			attr = &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
		}
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
			if !o.Write {
				return -1, fmt.Errorf("mount_setattr: %w", err)
			}
			// A submount the host itself has read-only stays so.
			if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, attr); err != nil {
				return -1, fmt.Errorf("mount_setattr (the file system may be read-only): %w", err)
			}
		}
		if err := unix.MoveMount(tree, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
			return -1, fmt.Errorf("move_mount: %w", err)
		}
		return -1, nil
	case opTmpfs:
		tfd, _, err := openTarget(o.Target, false, !o.Optional)
		if err != nil {
			if o.Optional && errors.Is(err, unix.ENOENT) {
				return -1, nil
			}
			return -1, err
		}
		defer unix.Close(tfd)
		if err := check(tfd, o.Want); err != nil {
			return -1, err
		}
		fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
		if err != nil {
			return -1, fmt.Errorf("fsopen: %w", err)
		}
		defer unix.Close(fs)
		size := "1m"
		if o.Write {
			size = "50%"
		}
		for k, v := range map[string]string{"mode": "0755", "size": size} {
			if err := unix.FsconfigSetString(fs, k, v); err != nil {
				return -1, fmt.Errorf("fsconfig %s: %w", k, err)
			}
		}
		if err := unix.FsconfigCreate(fs); err != nil {
			return -1, fmt.Errorf("fsconfig create: %w", err)
		}
		mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
		if err != nil {
			return -1, fmt.Errorf("fsmount: %w", err)
		}
		if err := unix.MoveMount(mnt, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
			unix.Close(mnt)
			return -1, fmt.Errorf("move_mount: %w", err)
		}
		if o.Write {
			unix.Close(mnt)
			return -1, nil
		}
		return mnt, nil
	case opDevpts:
		tfd, _, err := openTarget(o.Target, false, true)
		if err != nil {
			return -1, err
		}
		unix.Close(tfd)
		// The target lies in the call's fresh /dev tmpfs: no path race.
		if err := unix.Mount("devpts", o.Target, "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
			return -1, fmt.Errorf("mount devpts: %w", err)
		}
		return -1, nil
	case opSymlink:
		dir, err := openNoFollow(unix.AT_FDCWD, filepath.Dir(o.Target))
		if err != nil {
			return -1, err
		}
		defer unix.Close(dir)
		if err := unix.Symlinkat(o.Link, dir, filepath.Base(o.Target)); err != nil {
			return -1, fmt.Errorf("symlink: %w", err)
		}
		return -1, nil
	}
	return -1, fmt.Errorf("unknown operation %q", o.Kind)
}

// procReadOnly are the parts of /proc that stay read-only, and
// procMasked those that are hidden, in the call's own /proc (the list
// container runtimes use): a command running as root — the host's root,
// when warden runs as root — could otherwise write sysctls such as
// kernel.core_pattern, trigger sysrq, or read kernel memory maps.
var (
	procReadOnly = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
	procMasked   = []string{"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/sched_debug", "/proc/scsi", "/proc/kallsyms", "/proc/kmsg"}
)

// guardProc applies procReadOnly and procMasked to the fresh /proc; empty
// is a descriptor of an empty file (to cover masked files).
func guardProc(empty int) error {
	for _, p := range procReadOnly {
		tfd, err := openNoFollow(unix.AT_FDCWD, p)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		err = readOnlyInPlace(tfd)
		unix.Close(tfd)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	for _, p := range procMasked {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			continue
		}
		o := op{Kind: opTmpfs, Target: p, Optional: true, Why: "masked"}
		src := []int{empty}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			o = op{Kind: opBind, Target: p, Source: 0, File: true, Optional: true, Why: "masked"}
		}
		fd, err := apply(o, src)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if fd >= 0 {
			err = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
			unix.Close(fd)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
	}
	return nil
}

// readOnlyInPlace binds the tree at tfd onto itself, read-only.
func readOnlyInPlace(tfd int) error {
	tree, err := unix.OpenTree(tfd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(tree)
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	return unix.MoveMount(tree, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

// openTarget opens an absolute path in the view without following
// symlinks. A missing one is created when create is set (its missing
// parents as directories, itself as a file or directory), which only
// works where the view is writable (the private /tmp, a hidden path's
// tmpfs before it is sealed); existed reports whether it was there.
func openTarget(p string, file, create bool) (fd int, existed bool, err error) {
	fd, err = openNoFollow(unix.AT_FDCWD, p)
	if err == nil || !errors.Is(err, unix.ENOENT) || !create {
		return fd, err == nil, err
	}
	parts := strings.Split(strings.Trim(filepath.Clean(p), "/"), "/")
	dir, err := openNoFollow(unix.AT_FDCWD, "/")
	if err != nil {
		return -1, false, err
	}
	for i, name := range parts {
		next, err := openNoFollow(dir, name)
		if errors.Is(err, unix.ENOENT) {
			last := i == len(parts)-1
			if last && file {
				// A mount point file: created through the parent's
				// descriptor, never through a path.
				var f int
				if f, err = unix.Openat(dir, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600); err == nil {
					unix.Close(f)
				}
			} else {
				err = unix.Mkdirat(dir, name, 0o755)
			}
			if err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(dir)
				return -1, false, fmt.Errorf("create %s: %w", name, err)
			}
			next, err = openNoFollow(dir, name)
		}
		unix.Close(dir)
		if err != nil {
			return -1, false, err
		}
		dir = next
	}
	return dir, false, nil
}

// loopbackUp brings up lo in the helper's own network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// restrictLandlock confines the calling thread, and so the command
// forked from it, where the kernel has Landlock: read and execute
// everywhere visible, write only in the writable roots (and device
// files such as /dev/null), no signals or abstract unix sockets beyond
// the sandbox. Best effort: an older ABI enforces what it knows, none
// enforces nothing. The helper still writes the command's namespace
// maps under /proc after the fork. The caller holds its OS thread and
// has set no_new_privs on it.
func restrictLandlock(writable []string) error {
	cfg := landlock.Config{HandledAccessFS: landlock.V8.HandledAccessFS, Scoped: landlock.V8.Scoped}.BestEffort()
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles("/dev").WithIoctlDev(),
		landlock.PathAccess(llsys.AccessFSWriteFile, "/proc"),
	}
	if len(writable) > 0 {
		rules = append(rules, landlock.RWDirs(writable...).WithRefer())
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil || fd < 0 {
		return err // fd < 0: nothing to enforce on this kernel
	}
	defer unix.Close(fd)
	return llsys.LandlockRestrictSelf(fd, flags)
}
