#!/usr/bin/env bash
# deps.sh — the Debian/Ubuntu packages kopt needs, checked and, when possible, installed.
#
# usage: tools/deps.sh [--build | --test | --demo | --interp | --lint | --browser] [--check]
#   --build    what `make` needs: a C compiler, make, pkg-config, the jansson, SQLite and libcurl
#              development packages
#   --test     (default) what `make test` and `make valgrind` need: --build plus python3,
#              valgrind, Criterion and a python with torch for the worker's CPU tensor tests
#              (python3-torch, unless python3 or /usr/bin/python3 already imports torch)
#   --demo     what `make demo` needs on a GPU machine: --build plus python3 and python3-venv
#   --interp   what `make interp-ci` needs: --test plus python3-venv (Triton itself comes from PyPI)
#   --lint     what `make lint` needs: clang-format and cppcheck
#   --browser  what `make browser-check` needs: --test plus chromium
#   --check    only report: exit 1 when something is missing, install nothing
# Missing packages are installed with apt-get when running as root or with passwordless sudo;
# otherwise the exact command is printed and the script exits 1. KOPT_DEPS=skip skips every check
# (another distribution, packages installed by other means). Cheap when all is installed: one
# dpkg-query call. Exit codes: 0 all present (or installed), 1 missing and not installable,
# 2 bad command line.
set -euo pipefail

build=(gcc make pkg-config libjansson-dev libsqlite3-dev libcurl4-openssl-dev)
test=(python3 valgrind libcriterion-dev python3-torch)
profile=test check_only=0
for a in "$@"; do
  case "$a" in
    --build) profile=build ;;
    --test) profile=test ;;
    --demo) profile=demo ;;
    --interp) profile=interp ;;
    --lint) profile=lint ;;
    --browser) profile=browser ;;
    --check) check_only=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "tools/deps.sh: unknown argument '$a'; see tools/deps.sh --help" >&2; exit 2 ;;
  esac
done
case "$profile" in
  build) need=("${build[@]}") ;;
  test) need=("${build[@]}" "${test[@]}") ;;
  demo) need=("${build[@]}" python3 python3-venv) ;;
  interp) need=("${build[@]}" "${test[@]}" python3-venv) ;;
  lint) need=(clang-format cppcheck) ;;
  browser) need=("${build[@]}" "${test[@]}" chromium) ;;
esac

if [ "${KOPT_DEPS:-}" = skip ]; then exit 0; fi
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "tools/deps.sh: not a Debian/Ubuntu system, packages not checked; kopt needs the equivalents of: ${need[*]}" >&2
  exit 0
fi

# One query for all: "name installed-status" per known package.
declare -A have=()
while read -r name status; do
  [ "$status" = installed ] && have[$name]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${need[@]}" 2>/dev/null || true)

missing=()
for p in "${need[@]}"; do
  [ -n "${have[$p]:-}" ] && continue
  # torch from pip or another package satisfies the tensor tests (the Makefile's TORCH_PYTHON)
  if [ "$p" = python3-torch ]; then
    for py in python3 /usr/bin/python3; do
      if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import torch' >/dev/null 2>&1; then continue 2; fi
    done
  fi
  missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

cmd="apt-get install -y ${missing[*]}"
if [ "$check_only" = 1 ]; then
  echo "tools/deps.sh: missing packages: ${missing[*]}; install them with: sudo apt-get update && sudo $cmd" >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  echo "tools/deps.sh: missing packages: ${missing[*]}" >&2
  echo "tools/deps.sh: install them with (then run the same make command again):" >&2
  echo "    sudo apt-get update && sudo $cmd" >&2
  exit 1
fi
echo "tools/deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
