// Package sandbox is the one way warden starts a process for an agent:
// terminal commands, execute_code, `!cmd`, cron and kanban steps, kanban
// workers and stdio MCP servers all go through Sandbox.Command.
//
// On Linux a call runs under a small helper: the warden binary itself,
// re-executed as "warden-sandbox" (a package init hook recognises that
// name, so every binary that links this package, test binaries
// included, can act as the helper without a line of set-up). The host
// starts the helper in new user, mount and PID namespaces (and a network
// namespace when the network is off). The helper, PID 1 of its
// namespace, builds the view the command will see and then starts it:
//
//   - every mount read-only;
//   - the call's private temporary directory on /tmp (and /var/tmp), a
//     fresh /dev/shm;
//   - the writable roots (the call's workspace and sandbox.writable)
//     bound back read-write;
//   - warden's state directory, its config, the user's runtime
//     directory and the paths in sandbox.hide covered by an empty
//     read-only tmpfs (directories) or an empty read-only file (files),
//     so they "do not exist";
//   - paths that the host or the user's tools later execute or load
//     (.git/hooks, .git/config, other agents' settings, shell start-up
//     files when a writable root holds the home directory) bound back
//     read-only inside the writable roots;
//   - a fresh /proc for the new PID namespace: the host's processes
//     cannot be seen, signalled or traced;
//   - Landlock, where the kernel has it, as a second layer (writes only
//     under the writable roots; no signals or abstract unix sockets
//     beyond the sandbox).
//
// The command itself starts in a nested user and mount namespace, so
// the mounts the helper made are locked (they cannot be unmounted to
// uncover what they hide), as the host's own user id, with no
// capabilities and no_new_privs set. When the command exits, the helper
// exits, and the kernel kills everything left in the PID namespace:
// detached children (setsid, double fork, nohup) die with the call.
// The helper also dies when the host does (its lifeline pipe closes).
//
// Every process is recorded (pid and start time) in the store before it
// runs anything; Fence kills and confirms the death of what a dead
// spawner left behind, so a crashed host's steps never overlap their
// retries.
//
// Mode off skips the namespaces (the helper only execs the command) and
// is only ever used when the configuration says so: when the kernel
// cannot sandbox, Command fails closed with ErrUnavailable.
package sandbox
