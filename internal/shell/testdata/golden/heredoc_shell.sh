bash <<'SCRIPT'
mkfs.ext4 /dev/sdb1
SCRIPT
