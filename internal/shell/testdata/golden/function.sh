cleanup() {
  rm -rf "$BUILD_DIR"
}
for f in *.log; do gzip "$f"; done
cleanup
