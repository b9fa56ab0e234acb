package shell

import "strings"

// Family disk: formatting, wiping and partitioning block devices, volume
// managers, and dd. A device is matched by family (/dev/sdb1 is one,
// /dev/sdb-backup.img is a file): mkfs.ext4 disk.img makes a filesystem
// in a file and is not a disk wipe.

var _ = family(func() {
	register("disk", ruleMkfs, "mkfs", "mke2fs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat",
		"mkfs.fat", "mkfs.ntfs", "mkfs.exfat", "mkfs.f2fs", "mkfs.minix", "mkfs.msdos", "mkdosfs", "mkntfs", "mkswap", "mkfs.bfs",
		"mkfs.cramfs", "mkfs.jfs", "mkfs.reiserfs", "mkexfatfs", "mkudffs", "newfs", "newfs_apfs", "newfs_hfs", "newfs_msdos")
	register("disk", ruleWipe, "shred", "wipefs", "blkdiscard", "badblocks", "hdparm", "scrub", "wipe", "srm")
	register("disk", rulePartition, "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "cgdisk", "parted", "partx", "growpart", "kpartx")
	register("disk", ruleNvme, "nvme")
	register("disk", ruleCryptsetup, "cryptsetup")
	register("disk", ruleZfs, "zpool", "zfs")
	register("disk", ruleLvm, "lvremove", "vgremove", "pvremove", "lvreduce", "vgreduce", "lvresize", "dmsetup")
	register("disk", ruleDiskutil, "diskutil")
	register("disk", ruleDD, "dd")
})

var mkfsSpec = spec("", "t|type=", "b=", "c", "C=", "d=", "D", "e=", "E=", "f", "F", "g=", "G=", "i=", "I=", "j", "J=", "l=", "L|label=",
	"m=", "M=", "n", "N=", "o=", "O=", "q", "r=", "s=", "S", "T=", "U=", "v", "V", "z=", "help", "version", "p|pagesize=", "U|uuid=")

// targets returns the resolved operand of a disk tool: a raw device, a
// glob that could be one, a path that cannot be known, or a plain file.
type target int

const (
	targetFile target = iota
	targetDevice
	targetUnknown
)

func (c *cmd) deviceOperand(a Arg) (target, string) {
	p, ok := c.w.resolvePath(a)
	switch {
	case !ok:
		return targetUnknown, a.Value
	case isRawDevice(p) || a.Glob && devicePattern(p):
		return targetDevice, p
	}
	return targetFile, p
}

// ruleMkfs: a filesystem made on a device (or on a target that cannot be
// known) destroys what was there.
func ruleMkfs(c *cmd) {
	p := c.parse(mkfsSpec)
	if p.has("help", "V") && len(p.operands) == 0 {
		return
	}
	// mkfs DEVICE [BLOCKS]: whichever operand is a device is formatted
	// (an option value we do not know may come first).
	for _, op := range p.operands {
		if t, d := c.deviceOperand(op); t == targetDevice || t == targetUnknown && !isDigits(op.Value) {
			c.findDetail(clsDiskFormat, op.Span, d)
			return
		}
	}
}

var wipeSpecs = map[string]*optSpec{
	"shred":      spec("", "f|force", "n|iterations=", "random-source=", "s|size=", "u|remove?", "v|verbose", "x|exact", "z|zero", "help", "version"),
	"wipefs":     spec("", "a|all", "b|backup?", "f|force", "i|noheadings", "J|json", "n|no-act", "O|output=", "o|offset=", "p|parsable", "q|quiet", "t|types=", "l|lock?", "h|help", "V|version"),
	"blkdiscard": spec("", "f|force", "o|offset=", "l|length=", "p|step=", "s|secure", "z|zeroout", "q|quiet", "v|verbose", "h|help", "V|version"),
	"badblocks":  spec("", "b=", "c=", "d=", "e=", "i=", "o=", "p=", "t=", "f", "n", "s", "v", "w", "X", "B"),
}

// genericWipeSpec reads the others: a value-less option never hides a
// device operand.
var genericWipeSpec = spec("L")

// ruleWipe: shred, wipefs -a, blkdiscard, badblocks -w, hdparm
// --security-erase on a device are disk wipes; shred of files deletes
// them.
func ruleWipe(c *cmd) {
	s := wipeSpecs[c.name]
	if s == nil {
		s = genericWipeSpec
	}
	p := c.parse(s)
	switch c.name {
	case "wipefs":
		if !p.has("a") || p.has("n") {
			return
		}
	case "badblocks":
		if !p.has("w", "n") {
			return
		}
	case "hdparm":
		if !hasPrefixWord(c.args, "--security-erase", "--trim-sector-ranges", "--write-sector", "--sanitize", "-z") {
			return
		}
	}
	for _, op := range p.operands {
		t, d := c.deviceOperand(op)
		switch {
		case t != targetFile:
			c.findDetail(clsDiskWipe, op.Span, d)
		case c.name == "shred" || c.name == "wipe" || c.name == "srm" || c.name == "scrub":
			c.findDetail(clsDeleteForce, op.Span, d)
			c.writes([]Arg{op})
		}
	}
}

func hasWord(args []Arg, words ...string) bool {
	for _, a := range args[1:] {
		for _, w := range words {
			if a.Value == w {
				return true
			}
		}
	}
	return false
}

func hasPrefixWord(args []Arg, prefixes ...string) bool {
	for _, a := range args[1:] {
		for _, w := range prefixes {
			if strings.HasPrefix(a.Value, w) {
				return true
			}
		}
	}
	return false
}

// rulePartition: a partitioner's write verbs on a device rewrite its
// partition table; listing is safe.
func rulePartition(c *cmd) {
	var dev Arg
	found := false
	for _, a := range c.args[1:] {
		if t, _ := c.deviceOperand(a); t == targetDevice || t == targetUnknown && !strings.HasPrefix(a.Value, "-") {
			dev, found = a, true
			break
		}
	}
	if !found {
		return
	}
	words := strings.ToLower(strings.Join(words(c.args[1:]), " "))
	list := func(flags ...string) bool {
		for _, f := range flags {
			if hasWord(c.args, f) {
				return true
			}
		}
		return false
	}
	switch c.name {
	case "fdisk", "gdisk", "cfdisk", "cgdisk":
		if list("-l", "--list", "-x", "--list-details", "-V", "--version", "-h", "--help") {
			return
		}
	case "sfdisk":
		if list("-l", "--list", "-d", "--dump", "-J", "--json", "-s", "--show-size", "-g", "--show-geometry", "-V", "--verify", "--list-free", "-F", "--part-type", "--part-label", "--part-uuid", "--part-attrs") &&
			!strings.Contains(words, "--delete") {
			return
		}
	case "sgdisk":
		if !hasPrefixWord(c.args, "-o", "--clear", "-Z", "--zap-all", "-z", "--zap", "-d", "--delete", "-n", "--new", "-g", "--mbrtogpt", "-m", "--gpttombr", "-l", "--load-backup", "-R", "--replicate", "-G", "--randomize-guids", "-e", "--move-second-header", "-s", "--sort", "-t", "--typecode", "-c", "--change-name") {
			return
		}
	case "parted":
		destructive := false
		for _, v := range []string{"mklabel", "mktable", "rm", "mkpart", "resizepart", "resize", "mkfs", "rescue", "set", "toggle", "name", "disk_set"} {
			if hasWord(c.args, v) {
				destructive = true
			}
		}
		if !destructive {
			return
		}
	case "partx", "kpartx", "growpart":
		if !hasWord(c.args, "-d", "--delete") && c.name != "growpart" {
			return
		}
		if c.name == "growpart" {
			return // grows a partition in place: not destructive
		}
	}
	_, d := c.deviceOperand(dev)
	c.findDetail(clsDiskPartition, dev.Span, d)
}

// ruleNvme: nvme format / sanitize erase the drive.
func ruleNvme(c *cmd) {
	if len(c.args) < 2 {
		return
	}
	switch c.args[1].Value {
	case "format", "sanitize", "format-nvm", "write-zeroes", "dsm", "ns-delete", "delete-ns", "detach-ns":
		c.findDetail(clsDiskWipe, c.span, "nvme "+c.args[1].Value)
	}
}

// ruleCryptsetup: luksFormat formats, erase / luksErase destroy the keys.
func ruleCryptsetup(c *cmd) {
	for _, a := range c.args[1:] {
		switch strings.ToLower(a.Value) {
		case "luksformat", "reencrypt":
			c.findDetail(clsDiskFormat, a.Span, "cryptsetup "+a.Value)
			return
		case "erase", "lukserase", "luksremovekey", "lukskillslot":
			c.findDetail(clsDiskVolume, a.Span, "cryptsetup "+a.Value)
			return
		}
	}
}

// ruleZfs: zpool destroy/labelclear, zfs destroy -r.
func ruleZfs(c *cmd) {
	if len(c.args) < 2 {
		return
	}
	verb := c.args[1].Value
	switch {
	case c.name == "zpool" && (verb == "destroy" || verb == "labelclear"):
		c.findDetail(clsDiskVolume, c.span, "zpool "+verb)
	case c.name == "zfs" && verb == "destroy":
		p := parseOpts(spec("", "r", "R", "f", "n", "p", "v", "d"), c.args, 2)
		if p.has("n") {
			return
		}
		if p.has("r", "R") {
			c.findDetail(clsDiskVolume, c.span, "zfs destroy -r")
			return
		}
		c.find(clsDeleteRecursive, c.span)
	case c.name == "zfs" && verb == "rollback":
		c.find(clsGitDiscard, c.span)
	}
}

// ruleLvm: removing a volume, group or physical volume destroys it; with
// -f/-y it does so without asking.
func ruleLvm(c *cmd) {
	if c.name == "dmsetup" {
		if len(c.args) > 1 && (c.args[1].Value == "remove" || c.args[1].Value == "remove_all" || c.args[1].Value == "wipe_table") {
			c.findDetail(clsDiskVolume, c.span, "dmsetup "+c.args[1].Value)
		}
		return
	}
	if hasPrefixWord(c.args, "-f", "--force", "-y", "--yes", "-ff") || hasWord(c.args, "-fy", "-yf") {
		c.findDetail(clsDiskVolume, c.span, c.name+" -f")
		return
	}
	c.find(clsDeleteRecursive, c.span)
}

// ruleDiskutil: erase/zero/partition verbs destroy a disk.
func ruleDiskutil(c *cmd) {
	if len(c.args) < 2 {
		return
	}
	v := strings.ToLower(c.args[1].Value)
	if strings.HasPrefix(v, "erase") || slicesHas([]string{"zerodisk", "randomdisk", "secureerase", "reformat", "partitiondisk", "splitpartition", "mergepartitions", "deletevolume"}, v) {
		c.findDetail(clsDiskFormat, c.span, "diskutil "+c.args[1].Value)
	}
	if v == "apfs" && len(c.args) > 2 && strings.HasPrefix(strings.ToLower(c.args[2].Value), "delete") {
		c.findDetail(clsDiskVolume, c.span, "diskutil apfs "+c.args[2].Value)
	}
}

// ruleDD: of= is written (a device: hardline); if= is read (a device:
// a disk copy).
func ruleDD(c *cmd) {
	for _, a := range c.args[1:] {
		k, _, ok := strings.Cut(a.Value, "=")
		if !ok {
			continue
		}
		v := sub(a, len(k)+1)
		switch k {
		case "of":
			c.writes([]Arg{v})
		case "if":
			if t, d := c.deviceOperand(v); t == targetDevice {
				c.findDetail(clsDiskCopy, a.Span, d)
			}
			c.reads([]Arg{v})
		}
	}
}
