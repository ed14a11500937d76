#!/usr/bin/env bash
# Runs every test: type checks, the electron-vite build, vitest (unit, integration, real broker data),
# and Playwright end-to-end tests in Debian's Chromium when there are any. Prints the closing line
# "N passed, N failed, N skipped" summed over all of them.
set -u
cd "$(dirname "$0")/.."
# Chromium, xvfb and the Python peer encoders: installed when missing (as root with apt-get), else the
# one command to run is printed and the run stops (a fresh machine needs only the README's two commands).
bash scripts/system-deps.sh || { echo "0 passed, 1 failed"; exit 1; }
export NO_COLOR=1 FORCE_COLOR=0
reports=.reports
rm -rf "$reports" && mkdir -p "$reports"
status=0

step() { # name, command...: a build step counted as one test
  local name=$1; shift
  if "$@" >"$reports/$name.out" 2>&1; then echo "ok   $name"; echo pass >"$reports/$name.step";
  else echo "FAIL $name"; tail -n 60 "$reports/$name.out"; echo fail >"$reports/$name.step"; status=1; fi
}

step typecheck-node npx tsc --noEmit -p tsconfig.node.json
step typecheck-web npx vue-tsc --noEmit -p tsconfig.web.json
step build npx electron-vite build

npx vitest run --reporter=default --reporter=json --outputFile.json="$reports/vitest.json" || status=1

if ls test/e2e/*.spec.ts test/e2e/**/*.spec.ts >/dev/null 2>&1; then
  if [ -x /usr/bin/chromium ]; then
    PLAYWRIGHT_JSON_OUTPUT_NAME="$reports/playwright.json" npx playwright test --reporter=list,json || status=1
  else
    echo "e2e: /usr/bin/chromium is missing (apt-get install -y chromium); e2e tests not run" >&2
    status=1
  fi
fi

node scripts/summarize.mjs "$reports" || status=1
exit $status
