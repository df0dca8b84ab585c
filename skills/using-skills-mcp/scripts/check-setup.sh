#!/usr/bin/env bash
# Checks a skills-mcp installation: the binary is on PATH and a skill root validates.
# Run it yourself (it inspects your machine).
# Arguments (environment):
#   SKILL_ARG_ROOT  optional, a skills folder to validate; default: the roots skills-mcp finds
set -euo pipefail

if ! command -v skills-mcp >/dev/null 2>&1; then
  echo "error: skills-mcp is not on PATH; install it with 'cargo install --path host' from a checkout" >&2
  exit 1
fi
echo "binary: $(command -v skills-mcp)"
skills-mcp --version || true

root="${SKILL_ARG_ROOT:-}"
if [[ -n "$root" ]]; then
  if [[ ! -d "$root" ]]; then
    echo "error: $root is not a directory" >&2
    exit 2
  fi
  echo "validating $root"
  skills-mcp validate "$root"
else
  echo "validating the default roots"
  skills-mcp validate
fi

echo "sample search:"
skills-mcp search "write a commit message" --limit 3
