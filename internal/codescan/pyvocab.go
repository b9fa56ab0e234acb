package codescan

import "strings"

// Python's vocabulary: which qualified names are harmless, which are
// translated into commands, and which modules are known at all.
// Anything else is unknown and makes the code incomplete.

type category uint8

const (
	catUnknown category = iota
	catHarmless
	catEffect
	catModule
)

// pyAllHarmless are modules none of whose attributes runs, writes or
// reaches the network.
var pyAllHarmless = set("math", "cmath", "json", "re", "random", "itertools", "functools", "statistics", "decimal", "fractions",
	"string", "textwrap", "datetime", "time", "calendar", "collections", "collections.abc", "typing", "copy", "pprint",
	"dataclasses", "enum", "hashlib", "hmac", "uuid", "heapq", "bisect", "array", "struct", "unicodedata", "difflib",
	"zlib", "secrets", "numbers", "abc", "argparse", "shlex", "html", "fnmatch", "keyword", "colorsys", "graphlib",
	"reprlib", "warnings", "os.path", "posixpath", "ntpath", "urllib.parse", "glob", "base64", "binascii", "codecs",
	"errno", "stat", "locale", "contextlib", "operator", "io", "traceback", "inspect", "zoneinfo", "ipaddress", "getopt", "optparse")

// pyHarmless are single harmless names in modules with dangerous
// neighbours.
var pyHarmless = set(
	"sys.argv", "sys.version", "sys.version_info", "sys.platform", "sys.exit", "sys.stdout", "sys.stderr", "sys.stdin",
	"sys.maxsize", "sys.path", "sys.getsizeof", "sys.byteorder", "sys.executable", "sys.implementation",
	"sys.getrecursionlimit", "sys.setrecursionlimit", "sys.float_info", "sys.getdefaultencoding", "sys.flags",
	"sys.stdout.write", "sys.stderr.write", "sys.stdout.flush", "sys.stderr.flush", "sys.stdin.read", "sys.stdin.readline", "sys.stdin.readlines",
	"sys.stdout.buffer", "sys.stdout.buffer.write", "sys.stdin.buffer", "sys.stdin.buffer.read",
	"os.getcwd", "os.getpid", "os.getppid", "os.getuid", "os.getgid", "os.geteuid", "os.getegid", "os.getlogin", "os.cpu_count",
	"os.environ", "os.getenv", "os.sep", "os.linesep", "os.name",
	"os.uname", "os.urandom", "os.get_terminal_size", "os.fspath", "os.isatty", "os.access", "os.times", "os.devnull",
	"os.curdir", "os.pardir", "os.pathsep", "os.extsep", "os.getloadavg", "os.environ.get", "os.environ.items", "os.environ.keys",
	"os.environ.copy", "os.fsencode", "os.fsdecode", "os.strerror",
	"shutil.which", "shutil.disk_usage", "shutil.get_terminal_size",
	"subprocess.PIPE", "subprocess.DEVNULL", "subprocess.STDOUT", "subprocess.CalledProcessError", "subprocess.TimeoutExpired",
	"subprocess.CompletedProcess",
	"platform.system", "platform.machine", "platform.python_version", "platform.release", "platform.node", "platform.platform",
	"platform.processor", "platform.architecture", "platform.uname", "platform.version", "platform.python_implementation",
	"socket.gethostname", "socket.AF_INET", "socket.AF_INET6", "socket.SOCK_STREAM", "socket.SOCK_DGRAM", "socket.timeout",
	"getpass.getuser", "tempfile.gettempdir", "tempfile.mkdtemp", "tempfile.mkstemp", "tempfile.TemporaryDirectory",
	"tempfile.NamedTemporaryFile", "tempfile.TemporaryFile", "tempfile.SpooledTemporaryFile",
	"pathlib.PurePath", "pathlib.PurePosixPath",
	"logging.info", "logging.debug", "logging.warning", "logging.error", "logging.basicConfig", "logging.getLogger", "logging.INFO",
	"logging.DEBUG", "logging.WARNING", "logging.ERROR",
	"asyncio.run", "asyncio.sleep", "asyncio.gather", "asyncio.get_event_loop", "asyncio.create_task", "asyncio.wait_for",
	"threading.Lock", "threading.current_thread",
	// Objects warden made: the operation that mattered was counted when
	// they were made.
	"file.read", "file.readline", "file.readlines", "file.write", "file.writelines", "file.close", "file.flush", "file.seek",
	"file.tell", "file.__enter__", "file.__exit__", "file.fileno", "file.name",
	"response.json", "response.text", "response.content", "response.status_code", "response.ok", "response.headers",
	"response.raise_for_status", "response.read", "response.status", "response.getcode", "response.close", "response.iter_content",
	"response.iter_lines", "response.decode",
	"path.exists", "path.is_file", "path.is_dir", "path.is_symlink", "path.name", "path.suffix", "path.stem", "path.parts",
	"path.iterdir", "path.glob", "path.rglob", "path.stat", "path.as_posix", "path.is_absolute", "path.match", "path.suffixes",
	"socket.send", "socket.sendall", "socket.recv", "socket.close", "socket.settimeout", "socket.setsockopt", "socket.__enter__", "socket.__exit__",
	"socket.makefile",
)

// Builtins that are harmless to call (print, len, range …); the others
// that matter are effects or special (open, eval, exec, getattr …).
var pyBuiltins = set("print", "len", "range", "sum", "min", "max", "abs", "round", "sorted", "reversed", "enumerate", "zip",
	"map", "filter", "str", "int", "float", "bool", "list", "dict", "set", "frozenset", "tuple", "isinstance", "issubclass",
	"type", "repr", "format", "chr", "ord", "hex", "bin", "oct", "divmod", "pow", "all", "any", "hash", "id", "input", "iter",
	"next", "slice", "bytes", "bytearray", "complex", "callable", "dir", "hasattr", "exit", "quit", "super", "object",
	"property", "staticmethod", "classmethod", "ascii", "memoryview", "NotImplemented", "Exception", "BaseException",
	"Ellipsis", "aiter", "anext", "credits", "copyright", "license")

var pySpecial = set("eval", "exec", "compile", "__import__", "getattr")

// pyModules are the modules a program may import; the rest are
// unknown.
var pyModules = set("os", "sys", "subprocess", "shutil", "pathlib", "socket", "urllib", "urllib.request", "requests", "httpx",
	"platform", "getpass", "tempfile", "logging", "asyncio", "threading", "pty", "importlib", "webbrowser", "builtins",
	"http", "http.client")

var pyDataMethods = set("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "copy", "count", "index",
	"keys", "values", "items", "get", "update", "setdefault", "popitem", "add", "discard", "union", "intersection",
	"difference", "symmetric_difference", "issubset", "issuperset", "isdisjoint", "upper", "lower", "strip", "lstrip",
	"rstrip", "split", "rsplit", "splitlines", "join", "replace", "format", "format_map", "startswith", "endswith", "find",
	"rfind", "rindex", "encode", "decode", "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "isnumeric",
	"isdecimal", "isidentifier", "istitle", "title", "capitalize", "casefold", "swapcase", "zfill", "ljust", "rjust",
	"center", "partition", "rpartition", "expandtabs", "translate", "maketrans", "hex", "fromhex", "to_bytes", "from_bytes",
	"bit_length", "conjugate", "real", "imag", "is_integer", "as_integer_ratio", "most_common", "elements", "subtract",
	"total", "read", "readline", "readlines", "write", "writelines", "close", "flush", "seek", "tell", "isoformat",
	"strftime", "strptime", "timestamp", "date", "time", "weekday", "total_seconds", "group", "groups", "groupdict", "span",
	"start", "end", "match", "search", "findall", "finditer", "sub", "subn", "fullmatch", "hexdigest", "digest",
	"add_argument", "parse_args", "parse_known_args", "add_mutually_exclusive_group", "add_subparsers", "add_parser",
	"set_defaults", "print_help", "info", "debug", "warning", "error", "exception", "critical", "setLevel", "getvalue",
	"appendleft", "popleft", "rotate", "acquire", "release", "result", "now", "today", "fromisoformat", "fromtimestamp",
	"astimezone", "utcnow", "tolist", "__enter__", "__exit__", "sleep", "cancel", "done", "wait", "put", "as_dict", "asdict",
	"dumps", "loads", "dump", "load", "compress", "decompress", "update_wrapper", "wraps")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// pyModuleKnown reports a module a program may import.
func pyModuleKnown(name string) bool {
	return pyModules[name] || pyAllHarmless[name]
}

// pyCategory says what a qualified name is.
func pyCategory(q string) category {
	if _, ok := pyEffects[q]; ok {
		return catEffect
	}
	if b, ok := strings.CutPrefix(q, "builtins."); ok {
		switch {
		case pyBuiltins[b]:
			return catHarmless
		case pySpecial[b]:
			return catEffect
		}
		return catUnknown
	}
	if pyHarmless[q] {
		return catHarmless
	}
	if q == "importlib.import_module" {
		return catEffect
	}
	if pyModules[q] || pyAllHarmless[q] {
		return catModule
	}
	if i := strings.LastIndexByte(q, '.'); i > 0 {
		if pyAllHarmless[q[:i]] {
			return catHarmless
		}
		// An attribute of a harmless result (os.environ.get, a
		// datetime's method).
	}
	return catUnknown
}

// pyEffects translates calls into commands (or folds them).
var pyEffects map[string]effect

func init() {
	spawnShell := shellLine(0, "cmd")
	pyEffects = map[string]effect{
		"builtins.open": openFile(0, "file", 1), "io.open": openFile(0, "file", 1), "codecs.open": openFile(0, "filename", 1),
		"os.system": spawnShell, "os.popen": spawnShell, "subprocess.getoutput": spawnShell, "subprocess.getstatusoutput": spawnShell,
		"commands.getoutput": spawnShell,
		"subprocess.run":     spawnArgv(0, "args"), "subprocess.call": spawnArgv(0, "args"), "subprocess.check_call": spawnArgv(0, "args"),
		"subprocess.check_output": spawnArgv(0, "args"), "subprocess.Popen": spawnArgv(0, "args"), "pty.spawn": spawnArgv(0, "argv"),
		"asyncio.create_subprocess_shell": spawnShell,
		"asyncio.create_subprocess_exec":  execList(0),
		"os.execv":                        execVec(0, 1), "os.execve": execVec(0, 1), "os.execvp": execVec(0, 1), "os.execvpe": execVec(0, 1),
		"os.execl": execList(0), "os.execle": execList(0), "os.execlp": execList(0), "os.execlpe": execList(0),
		"os.spawnv": execVec(1, 2), "os.spawnve": execVec(1, 2), "os.spawnvp": execVec(1, 2), "os.spawnvpe": execVec(1, 2),
		"os.spawnl": execList(1), "os.spawnle": execList(1), "os.spawnlp": execList(1), "os.spawnlpe": execList(1),
		"os.posix_spawn": execVec(0, 1), "os.posix_spawnp": execVec(0, 1),
		"os.listdir": metaPath("ls"), "os.scandir": metaPath("ls"), "os.walk": metaPath("ls -R"), "os.stat": metaPath("stat"),
		"os.lstat": metaPath("stat"), "os.access": metaPath("stat"), "os.readlink": metaPath("readlink"),
		"os.remove": onPaths("rm", 0), "os.unlink": onPaths("rm", 0), "os.rmdir": onPaths("rmdir", 0),
		"os.removedirs": onPaths("rmdir -p", 0), "shutil.rmtree": onPaths("rm -rf", 0),
		"os.rename": onPaths("mv", 0, 1), "os.replace": onPaths("mv", 0, 1), "os.renames": onPaths("mv", 0, 1), "shutil.move": onPaths("mv", 0, 1),
		"shutil.copy": onPaths("cp", 0, 1), "shutil.copy2": onPaths("cp", 0, 1), "shutil.copyfile": onPaths("cp", 0, 1),
		"shutil.copymode": onPaths("cp --attributes-only", 0, 1), "shutil.copystat": onPaths("cp --attributes-only", 0, 1),
		"shutil.copytree": onPaths("cp -r", 0, 1), "os.symlink": onPaths("ln -s", 0, 1), "os.link": onPaths("ln", 0, 1),
		"os.mkdir": onPaths("mkdir", 0), "os.makedirs": onPaths("mkdir -p", 0), "os.mkfifo": onPaths("mkfifo", 0),
		"os.utime": onPaths("touch", 0), "os.chdir": onPaths("cd", 0),
		"os.chmod": chmodEffect(0, 1), "os.lchmod": chmodEffect(0, 1), "os.chown": chownEffect, "os.lchown": chownEffect,
		"shutil.chown": chownEffect,
		"os.truncate": func(s *state, c *call) *value {
			s.command("truncate -s " + s.word(c.argOr(1, "length")) + " -- " + s.word(pathOf(c.arg(0, "path"))))
			return vData
		},
		"os.kill": killEffect, "os.killpg": killEffect,
		"os.putenv": func(s *state, c *call) *value {
			s.command("export " + s.word(concat(c.argOr(0), str("="), c.argOr(1))))
			return vData
		},
		"shutil.make_archive": func(s *state, c *call) *value {
			s.command("tar -cf " + s.word(concat(pathOf(c.arg(0, "base_name")), str(".tar"))) + " -C " + s.word(pathOf(c.arg(2, "root_dir"))) + " .")
			return vData
		},
		"shutil.unpack_archive": func(s *state, c *call) *value {
			s.command("tar -xf " + s.word(pathOf(c.arg(0, "filename"))) + " -C " + s.word(pathOf(c.argOr(1, "extract_dir"))))
			return vData
		},
		"pathlib.Path": newPath, "pathlib.PosixPath": newPath, "pathlib.Path.home": func(*state, *call) *value {
			return obj("path", map[string]*value{"path": str("~")})
		},
		"pathlib.Path.cwd": func(*state, *call) *value { return obj("path", map[string]*value{"path": str(".")}) },
		"path.write_text":  pathWrite(false), "path.write_bytes": pathWrite(false),
		"path.read_text": pathRead, "path.read_bytes": pathRead,
		"path.open": func(s *state, c *call) *value {
			c2 := &call{name: c.name, args: append([]*value{c.self}, c.args...), kw: c.kw}
			return openFile(0, "", 1)(s, c2)
		},
		"path.unlink": selfCmd("rm"), "path.rmdir": selfCmd("rmdir"), "path.touch": selfCmd("touch"), "path.mkdir": selfCmd("mkdir -p"),
		"path.chmod": func(s *state, c *call) *value {
			return chmodEffect(0, 1)(s, &call{name: c.name, args: append([]*value{c.self}, c.args...), kw: c.kw})
		},
		"path.rename": selfTo("mv", false), "path.replace": selfTo("mv", false),
		"path.symlink_to": selfTo("ln -s", true), "path.hardlink_to": selfTo("ln", true),
		"path.resolve": pathSame, "path.absolute": pathSame, "path.expanduser": pathSame, "path.parent": pathSame,
		"path.with_suffix": pathSame, "path.with_name": pathSame,
		"path.joinpath": func(s *state, c *call) *value {
			parts := []*value{pathOf(c.self)}
			for _, a := range c.args {
				parts = append(parts, str("/"), pathOf(a))
			}
			return obj("path", map[string]*value{"path": concat(parts...)})
		},
		"requests.get": httpEffect("GET", 0, "url"), "requests.head": httpEffect("HEAD", 0, "url"),
		"requests.options": httpEffect("OPTIONS", 0, "url"), "requests.post": httpEffect("POST", 0, "url"),
		"requests.put": httpEffect("PUT", 0, "url"), "requests.patch": httpEffect("PATCH", 0, "url"),
		"requests.delete": httpEffect("DELETE", 0, "url"), "requests.request": httpEffect("", 1, "url"),
		"requests.Session": func(*state, *call) *value { return mod("requests") },
		"httpx.get":        httpEffect("GET", 0, "url"), "httpx.post": httpEffect("POST", 0, "url"), "httpx.put": httpEffect("PUT", 0, "url"),
		"httpx.patch": httpEffect("PATCH", 0, "url"), "httpx.delete": httpEffect("DELETE", 0, "url"), "httpx.request": httpEffect("", 1, "url"),
		"httpx.Client": func(*state, *call) *value { return mod("httpx") },
		"urllib.request.urlopen": func(s *state, c *call) *value {
			if d := c.arg(1, "data"); d != nil {
				c.kw["data"] = d
				return httpEffect("POST", 0, "url")(s, c)
			}
			return httpEffect("", 0, "url")(s, &call{name: c.name, args: c.args, kw: c.kw})
		},
		"urllib.request.Request": func(s *state, c *call) *value {
			f := map[string]*value{"url": c.argOr(0, "url")}
			if d := c.arg(1, "data"); d != nil {
				f["data"] = d
			}
			return obj("request", f)
		},
		"urllib.request.urlretrieve": downloadTo(0, 1),
		"socket.socket":              func(*state, *call) *value { return obj("socket", nil) },
		"socket.create_connection": func(s *state, c *call) *value {
			connectEffect(s, c.arg(0, "address"))
			return obj("socket", nil)
		},
		"socket.connect": func(s *state, c *call) *value {
			connectEffect(s, c.arg(0, "address"))
			return vData
		},
		"socket.bind": func(s *state, c *call) *value {
			s.find(ClassNetwork, Dangerous, "listens on a network port")
			return vData
		},
		"socket.listen": func(*state, *call) *value { return vData }, "socket.accept": func(*state, *call) *value { return vData },
		"webbrowser.open": func(s *state, c *call) *value {
			s.command("xdg-open " + s.word(c.argOr(0, "url")))
			return vData
		},
		"base64.b64decode": b64decode, "base64.urlsafe_b64decode": b64decode, "base64.decodebytes": b64decode,
		"base64.standard_b64decode": b64decode,
		"binascii.unhexlify":        hexdecode, "binascii.a2b_hex": hexdecode, "builtins.bytes.fromhex": hexdecode,
		"codecs.decode": func(s *state, c *call) *value {
			v := c.arg(0, "obj")
			enc, _ := c.arg(1, "encoding").known()
			if lit, ok := v.known(); ok && strings.Contains(strings.ToLower(enc), "rot") {
				return str(rot13(lit))
			}
			if strings.Contains(strings.ToLower(enc), "base64") {
				return b64decode(s, c)
			}
			if strings.Contains(strings.ToLower(enc), "hex") {
				return hexdecode(s, c)
			}
			return dynStr()
		},
		"importlib.reload": func(s *state, c *call) *value { return c.argOr(0) },
	}
}

func execVec(pathIdx, argsIdx int) effect {
	return func(s *state, c *call) *value {
		args := c.arg(argsIdx, "argv")
		if args != nil && args.k == kList && len(args.elems) > 0 {
			argv := append([]*value{c.argOr(pathIdx, "path")}, args.elems[1:]...)
			s.command(s.argv(argv))
			return vData
		}
		s.command(s.word(c.argOr(pathIdx, "path")) + " " + s.word(dynStr()))
		s.incomplete("%s with arguments not known before it runs", c.name)
		return vData
	}
}

func execList(pathIdx int) effect {
	return func(s *state, c *call) *value {
		if len(c.args) <= pathIdx {
			s.incomplete("%s without a program", c.name)
			return vData
		}
		argv := []*value{c.args[pathIdx]}
		if len(c.args) > pathIdx+2 {
			argv = append(argv, c.args[pathIdx+2:]...)
		}
		s.command(s.argv(argv))
		return vData
	}
}

func newPath(s *state, c *call) *value {
	var parts []*value
	for i, a := range c.args {
		if i > 0 {
			parts = append(parts, str("/"))
		}
		parts = append(parts, pathOf(a))
	}
	if len(parts) == 0 {
		parts = []*value{str(".")}
	}
	return obj("path", map[string]*value{"path": concat(parts...)})
}

func pathWrite(appendMode bool) effect {
	return func(s *state, c *call) *value {
		writeTo(s, pathOf(c.self), appendMode)
		return vData
	}
}

func pathRead(s *state, c *call) *value {
	return readFrom(s, pathOf(c.self))
}

func pathSame(s *state, c *call) *value {
	return obj("path", map[string]*value{"path": pathOf(c.self)})
}

func selfCmd(cmd string) effect {
	return func(s *state, c *call) *value {
		s.command(cmd + " -- " + s.word(pathOf(c.self)))
		return vData
	}
}

// selfTo renders "cmd -- SELF TARGET" (or "cmd -- TARGET SELF" for a
// link made at self).
func selfTo(cmd string, linkAtSelf bool) effect {
	return func(s *state, c *call) *value {
		a, b := pathOf(c.self), pathOf(c.arg(0, "target"))
		if linkAtSelf {
			a, b = b, a
		}
		s.command(cmd + " -- " + s.word(a) + " " + s.word(b))
		return vData
	}
}
