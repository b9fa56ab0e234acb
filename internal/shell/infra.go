package shell

import "strings"

// Family infra: destroying cloud and cluster resources. Global options
// before the verb are read with each tool's option table, so
// `kubectl --context x -n y delete …` and `terraform -chdir=x destroy`
// are seen; kubectl exec's command is judged like any other.

var _ = family(func() {
	register("infra", ruleKubectl, "kubectl", "oc", "kubecolor")
	register("infra", ruleHelm, "helm")
	register("infra", ruleTerraform, "terraform", "tofu", "terragrunt")
	register("infra", ruleStorage, "gsutil", "rclone", "mc", "restic", "borg", "kafka-topics", "kafka-topics.sh", "s3cmd", "azcopy")
	register("infra", ruleCloud, "aws", "gcloud", "az", "pulumi", "doctl", "flyctl", "fly", "heroku", "vercel", "gh", "eksctl", "kind", "minikube", "k3d", "linode-cli", "hcloud", "scw", "ibmcloud", "oci")
})

var kubectlSpec = spec("!", "n|namespace=", "context=", "cluster=", "user=", "kubeconfig=", "s|server=", "token=", "as=", "as-group=",
	"as-uid=", "request-timeout=", "insecure-skip-tls-verify", "certificate-authority=", "client-certificate=", "client-key=",
	"cache-dir=", "v=", "match-server-version", "profile=", "profile-output=", "tls-server-name=", "username=", "password=",
	"disable-compression", "log-flush-frequency=", "warnings-as-errors", "vmodule=",
	"f|filename=", "l|selector=", "o|output=", "c|container=", "A|all-namespaces", "all", "force", "grace-period=", "now", "wait",
	"cascade?", "field-selector=", "i|stdin", "t|tty", "k|kustomize=", "R|recursive", "dry-run?", "prune", "prune-allowlist=",
	"replicas=", "timeout=", "ignore-daemonsets", "delete-emptydir-data", "delete-local-data", "pod-running-timeout=", "q|quiet",
	"server-side", "force-conflicts", "field-manager=", "overwrite", "raw=", "ignore-not-found", "h|help", "image=", "restart=", "rm",
	"env=", "port=", "labels=", "record", "validate?", "show-managed-fields", "selector=", "subresource=", "chunk-size=", "sort-by=",
	"w|watch", "template=", "show-labels", "L|label-columns=", "no-headers", "watch-only", "output-watch-events", "allow-missing-template-keys",
	"type=", "max-surge=", "to-revision=", "from-literal=", "from-file=", "from-env-file=", "docker-server=", "docker-username=",
	"docker-password=", "docker-email=", "namespace=")

// ruleKubectl: delete, drain, apply --prune, replace --force and scale to
// zero destroy; exec runs its command in a pod.
func ruleKubectl(c *cmd) {
	p := c.parse(kubectlSpec)
	if len(p.operands) == 0 {
		return
	}
	verb := strings.ToLower(p.operands[0].Value)
	switch verb {
	case "delete", "drain":
		c.find(clsInfraDestroy, c.span)
	case "apply":
		if p.has("prune") {
			c.find(clsInfraDestroy, c.span)
		}
	case "replace":
		if p.has("force") {
			c.find(clsInfraDestroy, c.span)
		}
	case "scale":
		if v, ok := p.value("replicas"); ok && v.Value == "0" {
			c.find(clsInfraDestroy, c.span)
		}
	case "exec":
		if p.dashdash >= 0 && p.dashdash+1 < len(c.args) {
			c.run(c.args[p.dashdash+1:], c.name+" exec")
		} else if len(p.operands) >= 3 {
			c.run(p.operands[2:], c.name+" exec")
		}
	case "config":
		if len(p.operands) > 1 && p.operands[1].Value == "view" && hasPrefixWord(c.args, "--raw", "--flatten") {
			c.findDetail(clsSecretRead, c.span, "kubectl config view --raw prints credentials")
		}
		if len(p.operands) > 1 && (p.operands[1].Value == "delete-context" || p.operands[1].Value == "delete-cluster") {
			c.find(clsInfraDestroy, c.span)
		}
	case "get":
		if len(p.operands) > 1 && strings.HasPrefix(p.operands[1].Value, "secret") && p.has("o") {
			c.findDetail(clsSecretRead, c.span, "kubectl get secret -o prints secret values")
		}
	}
}

var helmSpec = spec("!", "kube-context=", "n|namespace=", "kubeconfig=", "debug", "registry-config=", "repository-cache=",
	"repository-config=", "burst-limit=", "kube-apiserver=", "kube-as-user=", "kube-as-group=", "kube-ca-file=",
	"kube-insecure-skip-tls-verify", "kube-tls-server-name=", "kube-token=", "qps=", "h|help")

func ruleHelm(c *cmd) {
	p := c.parse(helmSpec)
	if len(p.operands) == 0 {
		return
	}
	switch p.operands[0].Value {
	case "uninstall", "delete", "del", "un":
		c.find(clsInfraDestroy, c.span)
	case "rollback":
		c.find(clsGitDiscard, c.span)
	case "push", "cm-push":
		c.findDetail(clsPkgPublish, c.span, "helm "+p.operands[0].Value)
	}
}

var terraformSpec = spec("-!", "chdir=", "help", "version", "v")

var terraformApplySpec = spec("-!", "destroy?", "auto-approve?", "refresh-only?", "refresh?", "target=", "replace=", "var=", "var-file=",
	"lock?", "lock-timeout=", "input?", "parallelism=", "state=", "state-out=", "backup=", "compact-warnings", "json", "no-color",
	"out=", "detailed-exitcode", "generate-config-out=", "concise")

// ruleTerraform: -chdir=DIR before the verb; destroy, apply -destroy,
// state rm, workspace delete, force-unlock.
func ruleTerraform(c *cmd) {
	p := c.parse(terraformSpec)
	var ops []Arg
	for _, o := range p.operands {
		if !strings.HasPrefix(o.Value, "-") {
			ops = append(ops, o)
		}
	}
	if len(ops) == 0 {
		return
	}
	verb := ops[0].Value
	if c.name == "terragrunt" && strings.HasPrefix(verb, "run-all") && len(ops) > 1 {
		verb = ops[1].Value
	}
	switch verb {
	case "destroy":
		c.find(clsInfraDestroy, c.span)
	case "apply", "plan":
		// Go's flag package: -destroy, --destroy, -destroy=true.
		at := 1
		for at < len(c.args) && c.args[at].Value != verb {
			at++
		}
		ap := parseOpts(terraformApplySpec, c.args, at+1)
		if verb == "apply" && ap.flagOn("destroy") {
			c.find(clsInfraDestroy, c.span)
		}
	case "state":
		if len(ops) > 1 && (ops[1].Value == "rm" || ops[1].Value == "push" || ops[1].Value == "replace-provider") {
			c.find(clsInfraDestroy, c.span)
		}
	case "workspace":
		if len(ops) > 1 && ops[1].Value == "delete" {
			c.find(clsInfraDestroy, c.span)
		}
	case "force-unlock":
		c.find(clsInfraDestroy, c.span)
	}
}

// ruleCloud: the cloud CLIs' destroying verbs, wherever global options
// put them.
func ruleCloud(c *cmd) {
	var ops []string
	for i := 1; i < len(c.args); i++ {
		v := c.args[i].Value
		if strings.HasPrefix(v, "-") {
			if !strings.Contains(v, "=") && cloudValueFlags[v] {
				i++
			}
			continue
		}
		ops = append(ops, strings.ToLower(v))
	}
	if len(ops) == 0 {
		return
	}
	has := func(words ...string) bool { return hasAny(ops, words...) }
	switch c.name {
	case "aws":
		if len(ops) > 1 && (strings.HasPrefix(ops[1], "delete-") || strings.HasPrefix(ops[1], "terminate-") || strings.HasPrefix(ops[1], "deregister-") ||
			strings.HasPrefix(ops[1], "remove-") || strings.HasPrefix(ops[1], "purge-") || strings.HasPrefix(ops[1], "disable-") ||
			ops[0] == "s3" && (ops[1] == "rm" || ops[1] == "rb")) {
			c.find(clsInfraDestroy, c.span)
		}
		if ops[0] == "s3" && len(ops) > 1 && (ops[1] == "sync" || ops[1] == "mv") && hasWord(c.args, "--delete") {
			c.find(clsInfraDestroy, c.span)
		}
		if ops[0] == "s3" && len(ops) > 1 && (ops[1] == "cp" || ops[1] == "sync" || ops[1] == "mv") {
			var args []Arg
			for _, a := range c.args[1:] {
				if !strings.HasPrefix(a.Value, "-") {
					args = append(args, a)
				}
			}
			if len(args) >= 4 && strings.HasPrefix(args[len(args)-1].Value, "s3://") && !strings.HasPrefix(args[2].Value, "s3://") {
				c.uploadFiles(args[2:3])
			}
		}
		if ops[0] == "configure" && len(ops) > 1 && ops[1] == "get" || ops[0] == "sts" && len(ops) > 1 && ops[1] == "get-session-token" ||
			ops[0] == "ecr" && len(ops) > 1 && ops[1] == "get-login-password" {
			c.findDetail(clsSecretRead, c.span, "prints credentials")
		}
	case "gcloud":
		if has("delete") || len(ops) > 1 && ops[0] == "storage" && (ops[1] == "rm" || ops[1] == "rb") {
			c.find(clsInfraDestroy, c.span)
		}
		if has("print-access-token", "print-identity-token", "print-refresh-token") {
			c.findDetail(clsSecretRead, c.span, "prints a token")
		}
	case "az":
		if has("delete", "purge") || hasVerbPrefix(ops, "delete-", "purge-") {
			c.find(clsInfraDestroy, c.span)
		}
		if has("get-access-token") {
			c.findDetail(clsSecretRead, c.span, "prints a token")
		}
	case "pulumi":
		if ops[0] == "destroy" || ops[0] == "stack" && has("rm") || ops[0] == "state" && has("delete") {
			c.find(clsInfraDestroy, c.span)
		}
	case "gh":
		switch {
		case ops[0] == "auth" && has("token"):
			c.findDetail(clsSecretRead, c.span, "gh auth token prints a token")
		case ops[0] == "api" && (hasPrefixWord(c.args, "-XDELETE", "--method=DELETE", "--method=delete") || hasWordPair(c.args, "-X", "DELETE") || hasWordPair(c.args, "--method", "DELETE")):
			c.findDetail(clsInfraDestroy, c.span, "gh api DELETE")
		case has("delete") && (ops[0] == "repo" || ops[0] == "release" || ops[0] == "secret" || ops[0] == "variable" || ops[0] == "gist" || ops[0] == "run" || ops[0] == "cache" || ops[0] == "label" || ops[0] == "ssh-key" || ops[0] == "gpg-key"):
			c.find(clsInfraDestroy, c.span)
		case ops[0] == "gist" && has("create"):
			var files []Arg
			for _, a := range c.args[1:] {
				if !strings.HasPrefix(a.Value, "-") && a.Value != "gist" && a.Value != "create" {
					files = append(files, a)
				}
			}
			c.uploadFiles(files)
		case ops[0] == "release" && has("create"):
			c.findDetail(clsPkgPublish, c.span, "gh release create")
			p := parseOpts(ghReleaseSpec, c.args, 1)
			if len(p.operands) > 3 {
				c.uploadFiles(p.operands[3:]) // gh release create TAG FILES…
			}
		case ops[0] == "release" && has("upload"):
			var files []Arg
			for _, a := range c.args[4:] {
				if !strings.HasPrefix(a.Value, "-") {
					files = append(files, a)
				}
			}
			c.uploadFiles(files)
		}
	case "heroku":
		if strings.HasSuffix(ops[0], ":destroy") || strings.HasSuffix(ops[0], ":delete") || ops[0] == "apps:destroy" || ops[0] == "pg:reset" {
			c.find(clsInfraDestroy, c.span)
		}
		if ops[0] == "auth:token" {
			c.findDetail(clsSecretRead, c.span, "prints a token")
		}
	default:
		if has("delete", "destroy", "remove", "rm", "terminate", "purge") {
			c.find(clsInfraDestroy, c.span)
		}
	}
}

var ghReleaseSpec = spec("", "R|repo=", "t|title=", "n|notes=", "F|notes-file=", "target=", "d|draft", "p|prerelease", "latest?",
	"generate-notes", "notes-start-tag=", "discussion-category=", "verify-tag", "fail-on-no-commits", "notes-from-tag", "clobber", "h|help")

// cloudValueFlags are global flags of the cloud CLIs that take a
// separate value.
var cloudValueFlags = map[string]bool{
	"--profile": true, "--region": true, "--output": true, "--endpoint-url": true, "--query": true, "--ca-bundle": true,
	"--cli-read-timeout": true, "--cli-connect-timeout": true, "--color": true, "--project": true, "--account": true,
	"--configuration": true, "--format": true, "--verbosity": true, "--impersonate-service-account": true, "--subscription": true,
	"-g": true, "--resource-group": true, "-o": true, "--stack": true, "-s": true, "--cwd": true, "-C": true, "--context": true,
	"-a": true, "--app": true, "-R": true, "--repo": true, "--scope": true, "-t": true, "--team": true, "--token": true, "--zone": true,
	"--cluster": true, "--name": true, "-n": true,
}

// hasVerbPrefix reports an operand starting with one of the prefixes
// (az storage blob delete-batch).
func hasVerbPrefix(ops []string, prefixes ...string) bool {
	for _, o := range ops {
		for _, p := range prefixes {
			if strings.HasPrefix(o, p) {
				return true
			}
		}
	}
	return false
}

// hasWordPair reports two consecutive words (-X DELETE).
func hasWordPair(args []Arg, a, b string) bool {
	for i := 1; i+1 < len(args); i++ {
		if args[i].Value == a && strings.EqualFold(args[i+1].Value, b) {
			return true
		}
	}
	return false
}

// storageVerbs are the verbs of storage, backup and queue tools that
// delete data elsewhere (a bucket, a backup repository, a topic).
var storageVerbs = map[string][]string{
	"gsutil": {"rm", "rb", "rsync -d"}, "rclone": {"purge", "delete", "deletefile", "rmdir", "rmdirs", "cleanup"},
	"mc": {"rm", "rb"}, "restic": {"forget", "prune"}, "borg": {"delete", "prune", "compact"}, "s3cmd": {"del", "rm", "rb", "deleteall"},
	"azcopy": {"remove", "rm"},
}

var storageGlobal = spec("+", "m", "o=", "h=", "D", "DD", "q", "u", "i=", "r|repo|repository=", "password-file=", "cache-dir=",
	"config=", "C|config-dir=", "json", "quiet", "insecure", "v|verbose", "bootstrap-server=", "zookeeper=", "command-config=")

// ruleStorage: deleting buckets, objects, backups and topics.
func ruleStorage(c *cmd) {
	if strings.HasPrefix(c.name, "kafka-topics") {
		if hasWord(c.args, "--delete") {
			c.findDetail(clsInfraDestroy, c.span, c.name+" --delete")
		}
		return
	}
	if c.name == "gsutil" || c.name == "rclone" {
		ruleCloudCopy(c) // copies to a bucket are uploads
	}
	g := parseOpts(storageGlobal, c.args, 1)
	if len(g.operands) == 0 {
		return
	}
	verb := g.operands[0].Value
	for _, v := range storageVerbs[c.name] {
		if v == verb || strings.HasPrefix(v, verb+" ") && hasWord(c.args, strings.TrimPrefix(v, verb+" ")) {
			c.findDetail(clsInfraDestroy, c.span, c.name+" "+verb)
			return
		}
	}
}
