package codescan

import (
	"strings"
)

// JavaScript's vocabulary (Node, Deno, Bun).

// jsGlobals are global namespaces and constructors.
var jsGlobals = set("console", "Math", "JSON", "process", "Object", "Array", "String", "Number", "Boolean", "Promise",
	"Date", "Buffer", "Deno", "Bun", "Intl", "Symbol", "Map", "Set", "WeakMap", "WeakSet", "RegExp", "BigInt", "Error",
	"TypeError", "RangeError", "SyntaxError", "ReferenceError", "Uint8Array", "Int32Array", "Float64Array", "ArrayBuffer",
	"DataView", "TextEncoder", "TextDecoder", "URL", "URLSearchParams", "AbortController", "performance", "crypto")

// jsHarmlessModule are modules none of whose members runs, writes or
// reaches the network.
var jsHarmlessModule = set("path", "os", "util", "crypto", "url", "assert", "events", "readline", "zlib", "buffer",
	"querystring", "string_decoder", "perf_hooks", "timers", "timers/promises", "console", "Math", "JSON", "Object", "Array",
	"String", "Number", "Boolean", "Date", "Intl", "Symbol", "Map", "Set", "WeakMap", "WeakSet", "RegExp", "BigInt",
	"Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError", "Uint8Array", "Int32Array", "Float64Array",
	"ArrayBuffer", "DataView", "TextEncoder", "TextDecoder", "URL", "URLSearchParams", "AbortController", "performance",
	"Promise", "path/posix", "readline/promises", "process.stdout", "process.stderr", "process.stdin", "Deno.env", "crypto.subtle")

// jsModules are modules with effects the vocabulary knows.
var jsModules = set("child_process", "fs", "fs/promises", "http", "https", "net", "tls", "worker_threads")

var jsHarmless = set("parseInt", "parseFloat", "isNaN", "isFinite", "encodeURIComponent", "decodeURIComponent",
	"encodeURI", "decodeURI", "escape", "unescape", "btoa", "structuredClone", "queueMicrotask",
	"process.argv", "process.version", "process.versions", "process.platform", "process.arch", "process.env", "process.exit",
	"process.cwd", "process.pid", "process.ppid", "process.uptime", "process.memoryUsage", "process.hrtime", "process.hrtime.bigint",
	"process.nextTick", "process.exitCode", "process.title", "process.stdout", "process.stderr", "process.stdin", "process.on",
	"process.once", "process.execPath", "process.release", "process.getuid", "process.getgid", "process.emitWarning",
	"process.stdout.write", "process.stderr.write", "process.stdin.on", "process.stdin.setEncoding", "process.stdin.resume",
	"process.stdout.columns", "process.stdout.isTTY", "process.argv0", "process.config", "process.features",
	"Deno.args", "Deno.env", "Deno.env.get", "Deno.env.toObject", "Deno.cwd", "Deno.exit", "Deno.version", "Deno.build",
	"Deno.readTextFileSync", "Bun.argv", "Bun.env", "Bun.version", "Bun.sleep",
	"fs.existsSync", "fs.statSync", "fs.lstatSync", "fs.readdirSync", "fs.accessSync", "fs.realpathSync", "fs.readlinkSync",
	"fs.stat", "fs.lstat", "fs.readdir", "fs.access", "fs.exists", "fs.constants", "fs.promises", "fs/promises.stat",
	"fs/promises.readdir", "fs/promises.access", "fs/promises.lstat", "fs.promises.stat", "fs.promises.readdir",
	"fs.promises.access", "http.STATUS_CODES", "https.Agent", "http.Agent", "worker_threads.isMainThread", "worker_threads.parentPort",
	"worker_threads.workerData",
	"file.write", "file.end", "file.on", "file.once", "file.close", "file.pipe", "file.setEncoding",
	"response.json", "response.text", "response.on", "response.once", "response.end", "response.write", "response.setEncoding",
	"response.pipe", "response.status", "response.ok", "response.headers", "response.statusCode", "response.setTimeout",
	"response.destroy", "response.arrayBuffer", "response.body", "response.then", "response.catch", "response.resume",
	"socket.write", "socket.end", "socket.on", "socket.once", "socket.pipe", "socket.destroy", "socket.setEncoding",
	"buffer.length",
	// Processes warden already counted as commands.
	"process.outputSync", "process.output", "process.spawn", "process.status", "process.on", "process.once", "process.stdout",
	"process.stderr", "process.exited", "process.unref", "process.pid",
)

var jsDataMethods = set("length", "push", "pop", "shift", "unshift", "slice", "splice", "concat", "join", "reverse",
	"sort", "indexOf", "lastIndexOf", "includes", "find", "findIndex", "findLast", "findLastIndex", "filter", "map",
	"forEach", "reduce", "reduceRight", "some", "every", "flat", "flatMap", "fill", "keys", "values", "entries", "at",
	"toString", "toFixed", "toPrecision", "toLocaleString", "valueOf", "charAt", "charCodeAt", "codePointAt", "startsWith",
	"endsWith", "padStart", "padEnd", "repeat", "replace", "replaceAll", "split", "substring", "substr", "toLowerCase",
	"toUpperCase", "trim", "trimStart", "trimEnd", "match", "matchAll", "search", "localeCompare", "normalize", "get",
	"set", "has", "delete", "add", "clear", "size", "then", "catch", "finally", "test", "exec", "getTime", "toISOString",
	"getFullYear", "getMonth", "getDate", "getDay", "getHours", "getMinutes", "getSeconds", "getMilliseconds",
	"toDateString", "toTimeString", "toJSON", "json", "text", "question", "close", "on", "once", "emit", "digest",
	"update", "toSorted", "toReversed", "with", "log", "error", "warn", "info", "debug", "table", "dir", "stringify",
	"parse", "trace", "assert", "group", "groupEnd", "time", "timeEnd", "count", "createInterface", "from", "of",
	"isArray", "abs", "floor", "ceil", "round", "max", "min", "pow", "sqrt", "random", "sin", "cos", "tan", "log2",
	"log10", "sign", "trunc", "hypot", "cbrt", "exp", "now", "freeze", "assign", "fromEntries", "isInteger",
	"isSafeInteger", "resolve", "reject", "all", "allSettled", "race", "any", "basename", "dirname", "extname",
	"relative", "isAbsolute", "sep", "delimiter", "homedir", "tmpdir", "hostname", "platform", "type", "release", "arch",
	"cpus", "totalmem", "freemem", "uptime", "EOL", "userInfo", "loadavg", "networkInterfaces", "endianness",
	"inspect", "format", "isDeepStrictEqual", "types", "createHash", "randomBytes", "randomUUID", "createHmac", "getRandomValues",
	"strictEqual", "deepStrictEqual", "ok", "equal", "deepEqual", "notStrictEqual", "throws", "encode", "decode",
	"subarray", "readUInt8", "writeUInt8", "equals", "compare", "byteLength", "isBuffer", "alloc", "allocUnsafe",
	"getOwnPropertyNames", "defineProperty", "create", "getPrototypeOf", "is", "seal", "isFrozen", "hasOwn",
	"hasOwnProperty", "DateTimeFormat", "NumberFormat", "href", "pathname", "searchParams", "hostname", "protocol", "origin",
	"setEncoding", "resume", "pause", "write", "end", "pipe", "toLocaleDateString", "toLocaleTimeString", "description",
	"UTC", "resolve", "join", "normalize", "parse", "gzipSync", "gunzipSync", "deflateSync", "inflateSync", "setMaxListeners",
	"removeListener", "addListener", "listeners", "EventEmitter", "promisify", "TextEncoder", "TextDecoder", "callbackify",
	"fromCharCode", "fromCodePoint", "raw", "stdout", "stderr")

// jsCategory says what a qualified name is.
func jsCategory(q string) category {
	if _, ok := jsEffects[q]; ok {
		return catEffect
	}
	if jsHarmless[q] {
		return catHarmless
	}
	if jsModules[q] || jsHarmlessModule[q] {
		return catModule
	}
	if i := strings.LastIndexByte(q, '.'); i > 0 {
		if jsHarmlessModule[q[:i]] {
			return catHarmless
		}
	}
	return catUnknown
}

var jsEffects map[string]effect

func init() {
	exec := shellLine(0, "")
	spawn := jsSpawn
	jsEffects = map[string]effect{
		"os.homedir":         func(*state, *call) *value { return str("~") },
		"path.join":          func(s *state, c *call) *value { return pathJoin(c.args) },
		"child_process.exec": exec, "child_process.execSync": exec,
		"child_process.spawn": spawn, "child_process.spawnSync": spawn, "child_process.execFile": spawn, "child_process.execFileSync": spawn,
		"child_process.fork": func(s *state, c *call) *value {
			s.command("node " + s.word(pathOf(c.arg(0, ""))))
			return obj("process", nil)
		},
		"worker_threads.Worker": func(s *state, c *call) *value {
			if v, ok := c.kw["eval"]; ok && v.k != kNone {
				s.incomplete("worker running code given as a string")
			}
			s.command("node " + s.word(pathOf(c.arg(0, ""))))
			return obj("process", nil)
		},
		"util.promisify": func(s *state, c *call) *value {
			if v := c.arg(0, ""); v != nil {
				return v
			}
			return vData
		},
		"fetch": func(s *state, c *call) *value {
			m := "GET"
			if v, ok := c.kw["method"]; ok {
				if ms, ok := v.known(); ok {
					m = strings.ToUpper(ms)
				} else {
					m = "POST"
				}
			}
			return httpEffect(m, 0, "")(s, c)
		},
		"http.request": httpEffect("", 0, ""), "http.get": httpEffect("GET", 0, ""),
		"https.request": httpEffect("", 0, ""), "https.get": httpEffect("GET", 0, ""),
		"net.connect": netConnect, "net.createConnection": netConnect, "tls.connect": netConnect, "net.Socket": func(*state, *call) *value { return obj("socket", nil) },
		"socket.connect": netConnect,
		"net.createServer": func(s *state, c *call) *value {
			s.find(ClassNetwork, Dangerous, "listens on a network port")
			for _, a := range c.args {
				_ = a
			}
			return obj("server", nil)
		},
		"http.createServer": func(s *state, c *call) *value {
			s.find(ClassNetwork, Dangerous, "listens on a network port")
			return obj("server", nil)
		},
		"server.listen": func(*state, *call) *value { return vData }, "server.close": func(*state, *call) *value { return vData },
		"server.on":    func(*state, *call) *value { return vData },
		"process.kill": killEffect, "process.chdir": onPaths("cd", 0),
		"process.dlopen": func(s *state, c *call) *value {
			s.find(ClassNative, Dangerous, "loads native code")
			s.incomplete("loads native code")
			return vUnknown
		},
		"Buffer.from": decodeBase64JS, "atob": decodeBase64JS,
		"buffer.toString": func(s *state, c *call) *value {
			if t := c.self.fields["text"]; t != nil {
				return t
			}
			return dynStr()
		},
		"String.fromCharCode": func(s *state, c *call) *value {
			var b strings.Builder
			for _, a := range c.args {
				if a.k != kNum {
					return dynStr()
				}
				b.WriteRune(rune(a.n))
			}
			return str(b.String())
		},
		"Deno.run": func(s *state, c *call) *value {
			if v, ok := c.kw["cmd"]; ok && v.k == kList {
				s.command(s.argv(v.elems))
			} else {
				s.incomplete("Deno.run with a command not known before it runs")
			}
			return obj("process", nil)
		},
		"Deno.Command": func(s *state, c *call) *value {
			argv := []*value{c.argOr(0)}
			if v, ok := c.kw["args"]; ok && v.k == kList {
				argv = append(argv, v.elems...)
			} else if ok {
				argv = append(argv, dynStr())
			}
			s.command(s.argv(argv))
			return obj("process", nil)
		},
		"Bun.spawn": bunSpawn, "Bun.spawnSync": bunSpawn,
		"Bun.write": func(s *state, c *call) *value {
			writeTo(s, pathOf(c.arg(0, "")), false)
			return vData
		},
		"Bun.file": func(s *state, c *call) *value { return obj("bunfile", map[string]*value{"path": pathOf(c.arg(0, ""))}) },
		"bunfile.text": func(s *state, c *call) *value {
			return readFrom(s, pathOf(c.self))
		},
		"bunfile.json": func(s *state, c *call) *value {
			readFrom(s, pathOf(c.self))
			return vData
		},
		"Deno.writeTextFile": jsWrite(false), "Deno.writeTextFileSync": jsWrite(false), "Deno.writeFile": jsWrite(false),
		"Deno.writeFileSync": jsWrite(false), "Deno.readTextFile": jsRead, "Deno.readFile": jsRead, "Deno.readFileSync": jsRead,
		"Deno.remove": jsRm, "Deno.removeSync": jsRm, "Deno.rename": onPaths("mv", 0, 1), "Deno.renameSync": onPaths("mv", 0, 1),
		"Deno.copyFile": onPaths("cp", 0, 1), "Deno.mkdir": onPaths("mkdir -p", 0), "Deno.chmod": chmodEffect(0, 1),
		"Deno.symlink": onPaths("ln -s", 0, 1),
	}
	for _, m := range []string{"fs", "fs.promises", "fs/promises"} {
		for _, sfx := range []string{"", "Sync"} {
			if m != "fs" && sfx != "" {
				continue
			}
			jsEffects[m+".writeFile"+sfx] = jsWrite(false)
			jsEffects[m+".appendFile"+sfx] = jsWrite(true)
			jsEffects[m+".readFile"+sfx] = jsRead
			jsEffects[m+".rm"+sfx] = jsRm
			jsEffects[m+".rmdir"+sfx] = jsRm
			jsEffects[m+".unlink"+sfx] = onPaths("rm", 0)
			jsEffects[m+".rename"+sfx] = onPaths("mv", 0, 1)
			jsEffects[m+".copyFile"+sfx] = onPaths("cp", 0, 1)
			jsEffects[m+".cp"+sfx] = jsCp
			jsEffects[m+".chmod"+sfx] = chmodEffect(0, 1)
			jsEffects[m+".lchmod"+sfx] = chmodEffect(0, 1)
			jsEffects[m+".chown"+sfx] = chownEffect
			jsEffects[m+".lchown"+sfx] = chownEffect
			jsEffects[m+".symlink"+sfx] = onPaths("ln -s", 0, 1)
			jsEffects[m+".link"+sfx] = onPaths("ln", 0, 1)
			jsEffects[m+".mkdir"+sfx] = onPaths("mkdir -p", 0)
			jsEffects[m+".truncate"+sfx] = onPaths("truncate -s 0", 0)
			jsEffects[m+".utimes"+sfx] = onPaths("touch", 0)
			jsEffects[m+".open"+sfx] = jsOpen
		}
	}
	jsEffects["fs.createWriteStream"] = func(s *state, c *call) *value {
		flags, _ := c.kw["flags"].known()
		writeTo(s, pathOf(c.arg(0, "")), strings.Contains(flags, "a"))
		return obj("file", map[string]*value{"path": pathOf(c.arg(0, ""))})
	}
	jsEffects["fs.createReadStream"] = func(s *state, c *call) *value {
		readFrom(s, pathOf(c.arg(0, "")))
		return obj("file", map[string]*value{"path": pathOf(c.arg(0, ""))})
	}
}

func jsSpawn(s *state, c *call) *value {
	argv := []*value{c.argOr(0)}
	if len(c.args) > 1 && c.args[1].k == kList {
		argv = append(argv, c.args[1].elems...)
	} else if len(c.args) > 1 && c.args[1].k != kDict {
		argv = append(argv, dynStr())
		s.incomplete("%s with arguments not known before it runs", c.name)
	}
	if sh, ok := c.kw["shell"]; ok && sh.k != kNone {
		// With shell set, the words are joined and run by a shell.
		parts := []*value{}
		for i, a := range argv {
			if i > 0 {
				parts = append(parts, str(" "))
			}
			parts = append(parts, a)
		}
		s.command(withInput(s, c, s.line(concat(parts...), c.name)))
		return obj("process", nil)
	}
	s.command(withInput(s, c, s.argv(argv)))
	return obj("process", nil)
}

func bunSpawn(s *state, c *call) *value {
	v := c.arg(0, "")
	if v != nil && v.k == kDict {
		v = c.kw["cmd"]
	}
	if v != nil && v.k == kList {
		s.command(s.argv(v.elems))
	} else {
		s.incomplete("%s with a command not known before it runs", c.name)
	}
	return obj("process", nil)
}

func jsWrite(appendMode bool) effect {
	return func(s *state, c *call) *value {
		if f, ok := c.kw["flag"]; ok {
			if fl, ok := f.known(); ok && strings.Contains(fl, "a") {
				appendMode = true
			}
		}
		writeTo(s, pathOf(c.arg(0, "")), appendMode)
		return vData
	}
}

func jsRead(s *state, c *call) *value {
	return readFrom(s, pathOf(c.arg(0, "")))
}

func jsOpen(s *state, c *call) *value {
	mode := "r"
	if m := c.arg(1, "flags"); m != nil {
		if ms, ok := m.known(); ok {
			mode = ms
		} else {
			mode = "w"
		}
	}
	return openPath(s, pathOf(c.arg(0, "")), mode)
}

func jsRm(s *state, c *call) *value {
	flags := ""
	if r, ok := c.kw["recursive"]; ok && r.k != kNone {
		flags = "-r"
	}
	if f, ok := c.kw["force"]; ok && f.k != kNone {
		flags += "f"
		if flags == "f" {
			flags = "-f"
		}
	}
	cmd := "rm"
	if flags != "" {
		cmd += " " + flags
	}
	s.command(cmd + " -- " + s.word(pathOf(c.arg(0, ""))))
	return vData
}

func jsCp(s *state, c *call) *value {
	cmd := "cp"
	if r, ok := c.kw["recursive"]; ok && r.k != kNone {
		cmd = "cp -r"
	}
	s.command(cmd + " -- " + s.word(pathOf(c.arg(0, ""))) + " " + s.word(pathOf(c.arg(1, ""))))
	return vData
}

func netConnect(s *state, c *call) *value {
	host, port := c.kw["host"], c.kw["port"]
	if port == nil {
		port = c.arg(0, "")
	}
	if host == nil {
		if h := c.arg(1, ""); h != nil && h.k == kStr {
			host = h
		} else {
			host = str("localhost")
		}
	}
	connectEffect(s, &value{k: kList, elems: []*value{host, port}})
	return obj("socket", nil)
}
