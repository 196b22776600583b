/**
 * Bash for scripts that wait or keep time inside a host, with no fork:
 * `nap SECONDS` is a read that times out on a pipe nobody writes, and
 * `now_ms` sets `now` to the wall clock in ms from EPOCHREALTIME. A `sleep`
 * or a `date` each look is a fork and an exec, which the polls of the
 * rollback, reset-race and damage scenarios made many times a second on the
 * very host whose timing they watch. A poll's own command is forked once
 * when its substitution has no redirection of its own: write
 * `{ answer=$(curl …); } 2>/dev/null`, as bash forks twice for
 * `answer=$(curl … 2>/dev/null)`.
 */
export const shellPause = String.raw`
exec {nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$nap_fd" _ || true; }
now_ms() { now=$((${'$'}{EPOCHREALTIME/./} / 1000)); }
`;
