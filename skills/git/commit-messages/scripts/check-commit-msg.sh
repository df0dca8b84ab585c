#!/usr/bin/env bash
# Checks a commit message against Conventional Commits 1.0 and the usual 50/72 layout.
# Argument (environment): SKILL_ARG_MESSAGE = the full commit message.
# Exit status: 0 valid (warnings allowed), 1 errors found, 2 usage error.
set -euo pipefail

if [[ -z "${SKILL_ARG_MESSAGE+set}" ]]; then
  echo "error: SKILL_ARG_MESSAGE is not set" >&2
  exit 2
fi

errors=0
warnings=0
err() { echo "error: line $1: $2"; errors=$((errors + 1)); }
warn() { echo "warning: line $1: $2"; warnings=$((warnings + 1)); }

# Split into lines (dropping CRs) and ignore comment lines, as git does with the default cleanup.
lines=()
while IFS= read -r line || [[ -n "$line" ]]; do
  line="${line%$'\r'}"
  [[ "$line" == \#* ]] && continue
  lines+=("$line")
done <<<"$SKILL_ARG_MESSAGE"
# Drop trailing blank lines.
while ((${#lines[@]} > 0)) && [[ -z "${lines[-1]//[[:space:]]/}" ]]; do
  unset 'lines[-1]'
done

if ((${#lines[@]} == 0)) || [[ -z "${lines[0]//[[:space:]]/}" ]]; then
  echo "error: line 1: the message is empty or starts with a blank line"
  exit 1
fi

subject="${lines[0]}"
types='feat|fix|docs|style|refactor|perf|test|build|ci|chore|revert'
header_re="^($types)(\([a-z0-9][a-z0-9._/-]*\))?(!)?: (.+)$"

breaking_mark=""
if [[ "$subject" =~ $header_re ]]; then
  breaking_mark="${BASH_REMATCH[3]}"
  description="${BASH_REMATCH[4]}"
  if [[ "$description" =~ ^[[:space:]] ]]; then
    err 1 "exactly one space after the colon"
  fi
  if [[ "$description" == *. ]]; then
    warn 1 "no period at the end of the subject"
  fi
  first_word="${description%% *}"
  lower_word="${first_word,,}"
  if [[ "$lower_word" =~ ^[a-z]+(ed|ing)$ && ! "$lower_word" =~ ^(need|embed|seed|speed|feed|shred|bring|ring|string|sing)$ ]]; then
    warn 1 "use the imperative mood ('add', not '$first_word')"
  fi
  if [[ "$first_word" =~ ^[A-Z][a-z] ]]; then
    warn 1 "start the subject in lower case unless it is a name"
  fi
elif [[ "$subject" =~ ^([A-Za-z]+)(\([^\)]*\))?!?: ]]; then
  err 1 "unknown type '${BASH_REMATCH[1]}' or malformed scope; types: ${types//|/, }; scope: lower case"
else
  err 1 "subject must look like 'type(scope): subject', e.g. 'fix(api): handle empty body'"
fi

length=${#subject}
if ((length > 72)); then
  err 1 "subject is $length characters; at most 72"
elif ((length > 50)); then
  warn 1 "subject is $length characters; aim for 50"
fi

if ((${#lines[@]} > 1)) && [[ -n "${lines[1]//[[:space:]]/}" ]]; then
  err 2 "leave a blank line between the subject and the body"
fi

has_breaking_footer=0
for ((i = 1; i < ${#lines[@]}; i++)); do
  line="${lines[i]}"
  n=$((i + 1))
  if [[ "$line" =~ ^BREAKING[\ -]CHANGE:\ .+ ]]; then
    has_breaking_footer=1
  elif [[ "$line" =~ ^(breaking[\ -]change|Breaking[\ -]Change): ]]; then
    err "$n" "the breaking-change footer is written 'BREAKING CHANGE:' in upper case"
  fi
  if ((${#line} > 72)) && [[ ! "$line" =~ ^[[:space:]]*(https?://|\`) ]]; then
    warn "$n" "${#line} characters; wrap the body at 72"
  fi
done

if [[ -n "$breaking_mark" && $has_breaking_footer -eq 0 ]]; then
  warn 1 "'!' marks a breaking change: add a 'BREAKING CHANGE: <migration>' footer"
fi

if ((errors > 0)); then
  echo "$errors error(s), $warnings warning(s)"
  exit 1
fi
echo "Commit message is valid ($warnings warning(s))"
