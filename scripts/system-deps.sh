#!/usr/bin/env bash
# The system packages the tests need on Debian, installed when missing: Chromium (Playwright drives
# /usr/bin/chromium), xvfb (headed runs), and the independent Python encoders the format fixtures are
# checked against (python3-avro, python3-protobuf, python3-kafka with its snappy/lz4/zstd codecs), all
# under /usr/bin/python3. Running as root with apt-get it installs what is missing; otherwise it prints
# the one command to run and exits 1. `--check` only reports (exit 1 when something is missing).
set -u
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v xvfb-run >/dev/null 2>&1 || need+=(xvfb)
py() { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import $1" >/dev/null 2>&1; }
py avro.io || need+=(python3-avro)
py google.protobuf || need+=(python3-protobuf)
py kafka || need+=(python3-kafka)
py snappy || need+=(python3-snappy)
py lz4 || need+=(python3-lz4)
py zstandard || need+=(python3-zstandard)
[ ${#need[@]} -eq 0 ] && exit 0
cmd="apt-get install -y ${need[*]}"
if [ "${1:-}" = "--check" ]; then echo "missing system packages; run: sudo $cmd" >&2; exit 1; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing the system packages the tests need: ${need[*]}" >&2
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; then exit 0; fi
  echo "apt-get install failed; run: $cmd" >&2
  exit 1
fi
echo "the tests need system packages that are missing; run: sudo $cmd   (then npm test again)" >&2
exit 1
