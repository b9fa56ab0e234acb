package shell

// prefixable are the classes a prefix grant ("systemctl restart *") is
// offered for: the danger lies in the program and its verb, the same
// verb on other arguments is the same kind of act, and what it does can
// be undone. Everything that destroys or rewrites — deletes, disks, git
// history, SQL, infrastructure, permissions, containers and their
// volumes — is not: "rm -rf *" granted once deletes anything next time.
// Nor is what runs code warden cannot see (inline code, downloads,
// dynamic commands) or writes into sensitive files. A class not listed
// is not prefixable, so a class added later fails closed until someone
// decides otherwise here.
var prefixable = map[string]bool{
	clsService:        true, // systemctl restart nginx: a service, not data
	clsForceKill:      true, // pkill -9 node: processes, not data
	clsWinProcess:     true, // Stop-Process -Force: the same on Windows
	clsUnknownProgram: true, // analysis.profile strict: "make *" is the natural answer
}

// Prefixable reports whether a prefix grant may be offered for class:
// a human may choose "commands starting with …" only when every class
// the command was flagged for is prefixable.
func Prefixable(class string) bool { return prefixable[class] }
