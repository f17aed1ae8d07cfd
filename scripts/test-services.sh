#!/usr/bin/env bash
# The services the test suite needs beyond the project's .venv, set up by `make test` (and
# `make test-fast`) before pytest runs. Idempotent: when both are already there it only checks them.
#   - headless Chromium (tests/reports/test_compare_html.py): the one named by USERSIM_CHROMIUM,
#     else `chromium` on PATH, else Debian's package `chromium` through apt-get (as root, or sudo -n).
#   - Arize Phoenix, the OTLP receiver of tests/integration/test_otel_phoenix.py: in its own
#     virtualenv (it has many dependencies of its own, kept out of the project's), by default
#     .cache/phoenix-venv in the checkout, unless USERSIM_PHOENIX names a `phoenix` executable
#     already; the tests find it through USERSIM_PHOENIX, which the Makefile sets to that venv's
#     `phoenix` when it is unset. A stamp naming the pinned version marks the venv installed.
# Anything that cannot be set up stops here with the reason (exit 1), so `make test` fails loudly.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
PHOENIX_VERSION=${PHOENIX_VERSION:-20.26.1}
PHOENIX_VENV=${PHOENIX_VENV:-.cache/phoenix-venv}

fail() {
  echo "test-services: $*" >&2
  exit 1
}

# --- headless Chromium -----------------------------------------------------------------------
if [ -n "${USERSIM_CHROMIUM:-}" ]; then
  [ -x "$USERSIM_CHROMIUM" ] || fail "USERSIM_CHROMIUM=$USERSIM_CHROMIUM is not an executable file"
  chromium=$USERSIM_CHROMIUM
elif chromium=$(command -v chromium 2>/dev/null); then
  :
else
  echo "test-services: installing headless Chromium (Debian package chromium)"
  command -v apt-get >/dev/null 2>&1 ||
    fail "chromium is not installed and there is no apt-get to install it: install a Chromium and set USERSIM_CHROMIUM to it"
  if [ "$(id -u)" = 0 ]; then
    as_root=()
  elif sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    fail "chromium is not installed and installing it needs root: run 'sudo apt-get install -y chromium', or set USERSIM_CHROMIUM to a Chromium"
  fi
  "${as_root[@]}" apt-get update -qq || fail "apt-get update failed (installing chromium)"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null ||
    fail "apt-get install chromium failed"
  chromium=$(command -v chromium) || fail "apt-get installed chromium but it is not on PATH"
fi
"$chromium" --version >/dev/null 2>&1 || fail "$chromium --version failed: that Chromium does not run"

# --- Arize Phoenix ---------------------------------------------------------------------------
stamp="$PHOENIX_VENV/.installed-arize-phoenix-$PHOENIX_VERSION"
if [ -n "${USERSIM_PHOENIX:-}" ]; then
  [ -x "$USERSIM_PHOENIX" ] || fail "USERSIM_PHOENIX=$USERSIM_PHOENIX is not an executable file"
  phoenix=$USERSIM_PHOENIX
elif [ ! -f "$stamp" ] || [ ! -x "$PHOENIX_VENV/bin/phoenix" ]; then
  echo "test-services: installing arize-phoenix==$PHOENIX_VERSION into $PHOENIX_VENV (first run only; takes a few minutes)"
  if [ -d "$PHOENIX_VENV" ] && [ -n "$(ls -A "$PHOENIX_VENV")" ] && [ ! -f "$PHOENIX_VENV/pyvenv.cfg" ]; then
    fail "$PHOENIX_VENV exists and is not a virtualenv: not touching it (set PHOENIX_VENV elsewhere)"
  fi
  mkdir -p "$(dirname "$PHOENIX_VENV")"
  "$PYTHON" -m venv --clear "$PHOENIX_VENV" || fail "could not create the virtualenv $PHOENIX_VENV"
  "$PHOENIX_VENV/bin/python" -m pip install -q "arize-phoenix==$PHOENIX_VERSION" ||
    fail "pip install arize-phoenix==$PHOENIX_VERSION into $PHOENIX_VENV failed"
  [ -x "$PHOENIX_VENV/bin/phoenix" ] || fail "arize-phoenix installed no $PHOENIX_VENV/bin/phoenix"
  touch "$stamp"
fi
phoenix=${phoenix:-$PHOENIX_VENV/bin/phoenix}

echo "test-services: ready: chromium $chromium; phoenix $phoenix"
