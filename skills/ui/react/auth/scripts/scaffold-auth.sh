#!/usr/bin/env bash
# Creates the client-side auth files of a React app from the skill's AuthProvider template.
# Run it yourself from the project root (execution: claude); it never overwrites a file.
# Arguments (environment):
#   SKILL_ARG_COMPONENT_DIR      folder to create the files in, e.g. src/auth
#   SKILL_ARG_PROVIDER_TEMPLATE  saved copy of assets/AuthProvider.tsx.template
#   SKILL_ARG_SESSION_ENDPOINT   optional, default /api/session
set -euo pipefail

dir="${SKILL_ARG_COMPONENT_DIR:-}"
template="${SKILL_ARG_PROVIDER_TEMPLATE:-}"
endpoint="${SKILL_ARG_SESSION_ENDPOINT:-/api/session}"

if [[ -z "$dir" || -z "$template" ]]; then
  echo "error: set SKILL_ARG_COMPONENT_DIR and SKILL_ARG_PROVIDER_TEMPLATE" >&2
  exit 2
fi
if [[ ! -f "$template" ]]; then
  echo "error: template '$template' not found; fetch assets/AuthProvider.tsx.template with get_asset and save it first" >&2
  exit 2
fi
if [[ ! "$endpoint" =~ ^/[A-Za-z0-9._~/-]*$ ]]; then
  echo "error: SKILL_ARG_SESSION_ENDPOINT must be a URL path such as /api/session" >&2
  exit 2
fi

for name in AuthProvider.tsx RequireAuth.tsx index.ts; do
  if [[ -e "$dir/$name" ]]; then
    echo "error: $dir/$name already exists; not overwriting anything" >&2
    exit 1
  fi
done

mkdir -p "$dir"

# The endpoint matched the path pattern above, so it holds no sed metacharacters but '/'.
sed "s|{{SESSION_ENDPOINT}}|$endpoint|g" "$template" >"$dir/AuthProvider.tsx"

cat >"$dir/RequireAuth.tsx" <<'TSX'
import { useEffect } from "react";
import type { ReactNode } from "react";
import { useAuth } from "./AuthProvider";

/** Renders its children for a signed-in user; sends anonymous users to sign in. */
export function RequireAuth({ children, fallback = null }: { children: ReactNode; fallback?: ReactNode }) {
  const { status, signIn } = useAuth();

  useEffect(() => {
    if (status === "anonymous") signIn();
  }, [status, signIn]);

  return <>{status === "authenticated" ? children : fallback}</>;
}
TSX

cat >"$dir/index.ts" <<'TS'
export { AuthProvider, useAuth } from "./AuthProvider";
export type { AuthContextValue, AuthStatus, User } from "./AuthProvider";
export { RequireAuth } from "./RequireAuth";
TS

echo "created $dir/AuthProvider.tsx, $dir/RequireAuth.tsx, $dir/index.ts (session endpoint $endpoint)"
echo "next: wrap the app in <AuthProvider> and protected routes in <RequireAuth>"
