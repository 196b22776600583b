#!/usr/bin/env bash
# The one lint entry point for shell: every .sh, .bash and .bats file the
# repository tracks, plus the ./run front door.
set -euo pipefail

readonly script_name=shellcheck
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace

main() {
  cd "$workspace"
  local files=()
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.sh' '*.bash' '*.bats' run .ci/run)
  if [[ ${#files[@]} -eq 0 ]]; then
    echo "$script_name: no shell files found" >&2
    return 1
  fi
  shellcheck -x "${files[@]}"
  echo "$script_name: ${#files[@]} files clean" >&2
}

main "$@"
