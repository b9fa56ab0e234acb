// Package hookrun is the per-call path of warden's agent hooks, small
// enough to start like a small program: the warden-hook binary is this
// package and nothing else. An agent (Claude Code, Codex, Gemini CLI)
// runs the hook before every tool call, so its start-up is felt on every
// call; the warden binary links the OpenAI SDK, the MCP SDK and SQLite,
// whose package initialisation alone took longer than the whole call.
//
// With a host running, the host's gate decides over the admin socket
// (Client); reads of secrets by Claude Code's Read, Grep and Glob are
// judged by the protected-path table of the local config (JudgeRead). With
// no host, the call is handed whole to `warden hook PROTOCOL` (the
// binary installed beside this one), which opens the store and decides
// locally: only that path needs SQLite, and only it pays for it.
//
// internal/archtest keeps the heavy packages out of this package's
// imports.
package hookrun
