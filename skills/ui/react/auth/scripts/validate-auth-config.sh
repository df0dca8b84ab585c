#!/usr/bin/env bash
# Checks an .env file for the settings the React sign-in flow needs.
# Argument (environment): SKILL_ARG_ENV_FILE = path of the .env file.
# Exit status: 0 valid (warnings allowed), 1 errors found, 2 usage error.
# Secret values are never printed.
set -euo pipefail

env_file="${SKILL_ARG_ENV_FILE:-}"
if [[ -z "$env_file" ]]; then
  echo "error: SKILL_ARG_ENV_FILE is not set (path of the .env file to check)" >&2
  exit 2
fi
if [[ ! -f "$env_file" || ! -r "$env_file" ]]; then
  echo "error: cannot read '$env_file' (relative paths resolve against $(pwd))" >&2
  exit 2
fi

errors=0
warnings=0
err() { echo "error: $*"; errors=$((errors + 1)); }
warn() { echo "warning: $*"; warnings=$((warnings + 1)); }

declare -A values=()
declare -A first_line=()
line_no=0
while IFS= read -r line || [[ -n "$line" ]]; do
  line_no=$((line_no + 1))
  line="${line%$'\r'}"
  # Skip blank lines and comments.
  [[ "$line" =~ ^[[:space:]]*(#|$) ]] && continue
  line="${line#export }"
  if [[ ! "$line" =~ ^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*=(.*)$ ]]; then
    warn "line $line_no: not KEY=VALUE, ignored"
    continue
  fi
  key="${BASH_REMATCH[1]}"
  value="${BASH_REMATCH[2]}"
  # Trim surrounding whitespace and one pair of matching quotes.
  value="${value#"${value%%[![:space:]]*}"}"
  value="${value%"${value##*[![:space:]]}"}"
  if [[ "$value" =~ ^\"(.*)\"$ || "$value" =~ ^\'(.*)\'$ ]]; then
    value="${BASH_REMATCH[1]}"
  fi
  if [[ -n "${first_line[$key]:-}" ]]; then
    warn "line $line_no: $key is set again (first on line ${first_line[$key]}); the last value wins in most loaders"
  else
    first_line[$key]=$line_no
  fi
  values[$key]="$value"
done <"$env_file"

is_local_host() {
  [[ "$1" =~ ^http://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]+)?(/|$) ]]
}

check_url() {
  local key="$1" value="${values[$1]:-}"
  if [[ -z "$value" ]]; then
    err "$key is missing or empty"
  elif [[ "$value" =~ ^https://[^/[:space:]]+ ]]; then
    :
  elif is_local_host "$value"; then
    warn "$key uses http on a local host; use https everywhere else"
  else
    err "$key must be an https:// URL (got '$value')"
  fi
}

check_url AUTH_ISSUER_URL
check_url AUTH_REDIRECT_URI
if [[ -n "${values[AUTH_ISSUER_URL]:-}" && "${values[AUTH_ISSUER_URL]}" == */ ]]; then
  warn "AUTH_ISSUER_URL ends with '/': it must match the token's iss claim exactly"
fi
if [[ -n "${values[AUTH_REDIRECT_URI]:-}" && "${values[AUTH_REDIRECT_URI]}" != */auth/callback ]]; then
  warn "AUTH_REDIRECT_URI does not end with /auth/callback, the route the skill's server uses"
fi

if [[ -z "${values[AUTH_CLIENT_ID]:-}" ]]; then
  err "AUTH_CLIENT_ID is missing or empty"
fi

secret="${values[SESSION_SECRET]:-}"
if [[ -z "$secret" ]]; then
  err "SESSION_SECRET is missing or empty"
elif ((${#secret} < 32)); then
  err "SESSION_SECRET is ${#secret} characters; use at least 32 random characters (openssl rand -base64 48)"
elif [[ "$secret" =~ ^(changeme|secret|password|example) ]]; then
  err "SESSION_SECRET looks like a placeholder; generate a random one"
fi

# Variables with these prefixes are bundled into client-side JavaScript by common tools.
for key in "${!values[@]}"; do
  if [[ "$key" =~ ^(VITE_|NEXT_PUBLIC_|REACT_APP_|PUBLIC_|EXPO_PUBLIC_) ]] &&
    [[ "$key" =~ (SECRET|PASSWORD|PRIVATE|TOKEN|API_KEY) ]]; then
    err "$key (line ${first_line[$key]}) is exposed to the browser by its prefix but looks like a secret"
  fi
done

if ((errors > 0)); then
  echo "$env_file: $errors error(s), $warnings warning(s)"
  exit 1
fi
echo "Auth config is valid ($warnings warning(s))"
