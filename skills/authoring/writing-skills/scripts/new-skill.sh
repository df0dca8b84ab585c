#!/usr/bin/env bash
# Creates the skeleton of an Agent Skills folder: <parent>/<name>/SKILL.md plus empty
# scripts/, references/ and assets/ folders. Never overwrites an existing folder.
# Arguments (environment):
#   SKILL_ARG_NAME         skill name: 1-64 of a-z, 0-9 and single hyphens
#   SKILL_ARG_DESCRIPTION  what the skill does and when to use it (at most 1024 characters)
#   SKILL_ARG_PARENT_DIR   optional, folder to create the skill in; default: current folder
set -euo pipefail

name="${SKILL_ARG_NAME:-}"
description="${SKILL_ARG_DESCRIPTION:-}"
parent="${SKILL_ARG_PARENT_DIR:-.}"

if [[ -z "$name" || -z "$description" ]]; then
  echo "error: set SKILL_ARG_NAME and SKILL_ARG_DESCRIPTION" >&2
  exit 2
fi
if ((${#name} > 64)) || [[ ! "$name" =~ ^[a-z0-9]+(-[a-z0-9]+)*$ ]]; then
  echo "error: name '$name' must be 1-64 of a-z, 0-9 and single hyphens, not at either end" >&2
  exit 2
fi
if ((${#description} > 1024)); then
  echo "error: description is ${#description} characters; at most 1024" >&2
  exit 2
fi
if [[ "$description" == *$'\n'* ]]; then
  echo "error: keep the description on one line" >&2
  exit 2
fi
if [[ ! -d "$parent" ]]; then
  echo "error: parent folder '$parent' does not exist" >&2
  exit 2
fi

dir="$parent/$name"
if [[ -e "$dir" ]]; then
  echo "error: $dir already exists" >&2
  exit 1
fi

# YAML single-quoted scalar: double every single quote.
quoted="'${description//\'/\'\'}'"
title="$(tr '-' ' ' <<<"$name")"
title="${title^}"

mkdir -p "$dir/scripts" "$dir/references" "$dir/assets"
cat >"$dir/SKILL.md" <<MD
---
name: $name
description: $quoted
---

# $title

## Workflow
<!-- The steps, in order, as instructions. Point to references/ files for details. -->

## Rules
<!-- Conventions and decisions, each with its reason when it is not obvious. -->
MD

echo "created $dir/SKILL.md with scripts/, references/ and assets/"
if [[ "${description,,}" != *when* ]]; then
  echo "hint: add 'Use when ...' to the description so agents know when to pick the skill"
fi
