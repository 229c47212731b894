#!/usr/bin/env bash
# The Dockerfile's build without a Docker engine (CI machines have none): copies the build context
# as .dockerignore lets it through, runs the build stage's RUN steps in it (cache mounts and the
# global pnpm install left out), then checks that what the runtime stage copies is there: every
# service's dist/main.js, the dashboard, and the hoisted Prisma CLI of the migration Job.
# Usage: scripts/image-check.sh   (needs pnpm and rsync; takes a minute or two)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT

# .dockerignore patterns as rsync excludes: `**/x` anywhere, `x` at the top of the context.
excludes=()
while IFS= read -r line; do
  line="${line%%#*}"
  line="${line%"${line##*[![:space:]]}"}"
  [ -n "$line" ] || continue
  case "$line" in
    '**/'*) excludes+=(--exclude "${line#\*\*/}") ;;
    *) excludes+=(--exclude "/$line") ;;
  esac
done <"$repo/.dockerignore"
rsync -a "${excludes[@]}" "$repo/" "$ctx/"

# The build stage: from its FROM to the next one, continuation lines joined.
steps="$(awk '/^FROM .* AS build/{on=1; next} /^FROM /{on=0} on' "$repo/Dockerfile" |
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | grep '^RUN ')"
while IFS= read -r step; do
  cmd="$(sed -E -e 's/^RUN //' -e 's/--mount=[^ ]+ //g' -e 's/ --store-dir=[^ ]+//g' <<<"$step")"
  case "$cmd" in *'npm install -g pnpm'*) continue ;; esac
  printf '==> %s\n' "$cmd"
  (cd "$ctx" && CI=true bash -ec "$cmd")
done <<<"$steps"

missing=0
for s in "$repo"/services/*/; do
  s="$(basename "$s")"
  [ -f "$ctx/services/$s/dist/main.js" ] || { echo "services/$s/dist/main.js was not built" >&2; missing=1; }
done
[ -f "$ctx/services/gateway/dashboard/dist/index.html" ] || { echo "the dashboard was not built" >&2; missing=1; }
[ -f "$ctx/node_modules/prisma/build/index.js" ] || { echo "no hoisted Prisma CLI for the migration" >&2; missing=1; }
(cd "$ctx/libs/db" && node --input-type=module -e "import 'pg'; import { createRequire } from 'node:module'; createRequire(process.cwd() + '/migrate/run.mjs').resolve('prisma/build/index.js')") ||
  { echo "the migration entry point (libs/db/migrate/run.mjs) cannot load pg or find the Prisma CLI" >&2; missing=1; }
[ "$missing" = 0 ] || exit 1
echo "==> image build steps OK"
