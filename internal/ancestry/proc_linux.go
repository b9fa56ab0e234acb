package ancestry

// statSystem reads a process of the running system from /proc.
func statSystem(pid int) (Proc, error) { return FS{Root: "/proc"}.procStat(pid) }
