import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The checkout, held visible inside the private host wherever it lives. */
const workspace = realpathSync(path.join(import.meta.dirname, '../..'));

/** The built executable under test. */
export const binary = path.resolve(
  process.env.AKS_FLEX_NODE_BINARY ?? path.join(import.meta.dirname, '../../dist/aks-flex-node'),
);

/** What a script run on a private host printed and how it ended. */
export interface HostRun {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Why the namespace suites cannot run here, or undefined when they can. They
 * need root and `unshare -m`; the binary must be built (the test command builds it).
 */
export function namespaceUnavailable(): string | undefined {
  if (process.geteuid?.() !== 0) return 'not running as root';
  const probe = spawnSync('unshare', ['-m', '-n', 'true']);
  if (probe.status !== 0) {
    return `unshare -m -n does not work here: ${probe.stderr.toString().trim()}`;
  }
  if (!existsSync(binary)) throw new Error(`${binary} is missing; run \`pnpm build\` first`);
  // The scenarios' polls ask the daemon with OpenBSD netcat's -U (agent_get
  // in the prelude); a missing one is a broken setup, not a reason to skip.
  const netcat = spawnSync('nc', ['-h'], { encoding: 'utf8' });
  if (netcat.error !== undefined || !netcat.stderr.includes('-U')) {
    throw new Error(
      'nc with -U (Debian package netcat-openbsd) is missing; `./run test` installs it',
    );
  }
  return undefined;
}

// Runs inside the new mount namespace before the scenario. Every path the
// product writes is replaced by a tmpfs or an overlay, so nothing the
// scenario does reaches the machine's real /opt, /usr/local, /run or /etc.
const prelude = String.raw`
set -euo pipefail
mount --make-rprivate /
mkdir -p "$SCRATCH/etc-upper" "$SCRATCH/etc-work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$SCRATCH/etc-upper,workdir=$SCRATCH/etc-work" /etc
# The checkout (the binary and archives under test) may live under one of the
# directories replaced below, as a CI clone in /tmp does: it is held on a
# private tmpfs mount point first and bound back at its own path afterwards.
hold=/mnt
case "$WORKSPACE/" in /mnt/*) hold=/media ;; esac
mount -t tmpfs -o mode=0700 tmpfs "$hold"
mkdir "$hold/workspace"
mount --bind "$WORKSPACE" "$hold/workspace"
# /var/log too: the Go config names /var/log/aks-flex-node, and two files run
# at once, so a directory one leaves there would show up in the other's
# "nothing left" check (and on this machine). /var/tmp stays shared: a test
# hands files it built on this machine in through it. /tmp last: the overlay
# above lives in the real /tmp and stays mounted.
for dir in /opt /usr/local /run /srv /var/lib /var/log /tmp; do mount -t tmpfs -o mode=0755 tmpfs "$dir"; done
chmod 1777 /tmp
if [ ! -d "$WORKSPACE" ] || [ -z "$(ls -A "$WORKSPACE")" ]; then
  mkdir -p "$WORKSPACE"
  mount --bind "$hold/workspace" "$WORKSPACE"
fi
mkdir -p /usr/local/bin /usr/local/lib
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# Helpers the scenarios share.
legacy_install() { # an earlier release's blue/green layout under /usr/local
  mkdir -p /usr/local/lib/aks-flex-node
  cp "$BINARY" /usr/local/lib/aks-flex-node/aks-flex-node-blue
  ln -s /usr/local/lib/aks-flex-node/aks-flex-node-blue /usr/local/lib/aks-flex-node/aks-flex-node-current
  ln -s /usr/local/lib/aks-flex-node/aks-flex-node-blue /usr/local/lib/aks-flex-node/aks-flex-node-last-good
  ln -s /usr/local/lib/aks-flex-node/aks-flex-node-current /usr/local/bin/aks-flex-node
}
stand_in_last_good() { # last-good: a stand-in for a release that predates the host root
  printf '#!/bin/sh\necho "aks-flex-node v0.9.0 (no host root)"\n' > /usr/local/lib/aks-flex-node/aks-flex-node-green
  chmod 0755 /usr/local/lib/aks-flex-node/aks-flex-node-green
  ln -sfn /usr/local/lib/aks-flex-node/aks-flex-node-green /usr/local/lib/aks-flex-node/aks-flex-node-last-good
}
# A node as the Go releases leave it (the e2e harness's layOutRealNode, files
# only: the namespace has no systemd, and its network is loopback alone):
# kube1/kube2 root filesystems each with a real copy of the agent, their
# .nspawn settings, service overrides, pre-start hook units and enablement,
# the LocalDNS unit and helper, and the WireGuard keys. The hooks name the
# lifecycle helper under ROOT (default /opt/unbounded/agent).
render_hook() { # TEMPLATE MACHINE ROOT: a hook as the Go releases (and this product) write it
  sed -e "s#{{machine}}#$2#g" -e "s#{{helper}}#$3/bin/unbounded-agent-nspawn-lifecycle#g" "$WORKSPACE/systemd/$1"
}
# What of the real-shaped node the agent kept, once the host converged:
# node_copies says, per machine, whether its copy is the binary CURRENT
# resolves to (current), the build the node was laid out with (first) or
# neither (other); node_hooks says ok when both machines' hook units are
# byte for byte as rendered for the helper under ROOT, that helper is
# executable and the machines are still enabled, else what is not.
node_copies() { # CURRENT
  local m copy cur
  cur=$(readlink -f "$1")
  for m in kube1 kube2; do
    copy=/var/lib/machines/$m/usr/local/bin/aks-flex-node
    if cmp -s "$copy" "$cur"; then echo -n "$m:current "
    elif cmp -s "$copy" "$BINARY"; then echo -n "$m:first "
    else echo -n "$m:other "; fi
  done
  echo
}
node_hooks() { # [ROOT]
  local root=/opt/unbounded/agent units=/etc/systemd/system m problems=
  [ $# -eq 0 ] || root=$1
  for m in kube1 kube2; do
    render_hook unbounded-agent-regenerate-config@.service "$m" "$root" | cmp -s - "$units/unbounded-agent-regenerate-config@$m.service" || problems="$problems regenerate@$m"
    render_hook systemd-nspawn-override.conf "$m" "$root" | cmp -s - "$units/systemd-nspawn@$m.service.d/override.conf" || problems="$problems override@$m"
    [ -L "$units/machines.target.wants/systemd-nspawn@$m.service" ] || problems="$problems enabled@$m"
  done
  [ -x "$root/bin/unbounded-agent-nspawn-lifecycle" ] || problems="$problems helper"
  [ -n "$problems" ] || problems=' ok'
  echo "$problems" | sed 's/^ //'
}
real_node() { # [ROOT]
  local root=/opt/unbounded/agent units=/etc/systemd/system m
  [ $# -eq 0 ] || root=$1
  for m in kube1 kube2; do
    install -D -m 0644 /dev/null "/var/lib/machines/$m/etc/os-release"
    printf 'ID=ubuntu\nVERSION_ID="24.04"\n' > "/var/lib/machines/$m/etc/os-release"
    install -D -m 0755 "$BINARY" "/var/lib/machines/$m/usr/local/bin/aks-flex-node"
    install -d "/var/lib/machines/$m/etc/cni/net.d"
    echo '{"cniVersion":"0.3.1","name":"bridge","type":"bridge","bridge":"cni0"}' > "/var/lib/machines/$m/etc/cni/net.d/99-bridge.conf"
    install -d /etc/systemd/nspawn "$units/systemd-nspawn@$m.service.d" "$units/machines.target.wants"
    printf '[Exec]\nBoot=yes\nPrivateUsers=no\n\n[Network]\nVirtualEthernet=no\n' > "/etc/systemd/nspawn/$m.nspawn"
    render_hook unbounded-agent-regenerate-config@.service "$m" "$root" > "$units/unbounded-agent-regenerate-config@$m.service"
    render_hook systemd-nspawn-override.conf "$m" "$root" > "$units/systemd-nspawn@$m.service.d/override.conf"
    ln -sfn "$units/systemd-nspawn@.service" "$units/machines.target.wants/systemd-nspawn@$m.service"
  done
  printf '[Unit]\nBefore=systemd-nspawn@kube1.service systemd-nspawn@kube2.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=%s up --interface localdns\nExecStop=%s down\n[Install]\nWantedBy=multi-user.target\n' \
    "$root/libexec/unbounded-localdns-network" "$root/libexec/unbounded-localdns-network" > "$units/unbounded-localdns-network.service"
  install -D -m 0700 /dev/null "$root/libexec/unbounded-localdns-network"
  install -d -m 0700 /etc/wireguard
  echo 'cHJpdmF0ZS1rZXktb2YtdGhlLW5vZGU=' > /etc/wireguard/server.priv
  echo 'cHVibGljLWtleS1vZi10aGUtbm9kZQ==' > /etc/wireguard/server.pub
  chmod 0600 /etc/wireguard/server.priv /etc/wireguard/server.pub
}
# Polls that cost what a poll must, and no more. The waits below run through
# every daemon start of every crash trial, four suite files at once on two
# cores, and in a CI run the polling shell (curl, grep and sleep, each a fork
# and exec ten times a second) took about a fifth of the CPU: on this VM one
# curl costs 25-32 ms of CPU, an nc asking the same 4, and a sleep 5 where
# a read that times out costs none. The daemon's answers are still HTTP from
# its socket: nc sends the request, bash matches the answer.
exec {nap_fd}<> <(:)
nap() { # SECONDS: a pause without a fork (a read of a pipe nobody writes, timing out)
  read -r -t "$1" -u "$nap_fd" _ || true
}
agent_get() { # PATH: sets agent_reply to the body of the daemon's answer, of any status; fails when none answers
  # One fork a look, nc's: a fork of bash is what the polls' CPU went to
  # (copying its page tables, then faulting its pages back in). So the reply
  # goes to a variable, as a caller's $(agent_get) was a subshell around it,
  # and the redirections sit on a group around the substitution, as bash
  # forks once more for a substitution whose command has its own.
  { agent_reply=$(nc -U -w 10 /run/aks-flex-node/agent.sock); } 2>/dev/null <<<"GET $1 HTTP/1.0"$'\r\nHost: agent\r\n\r' || return 1
  [[ $agent_reply == HTTP/* ]] || return 1
  agent_reply=${'$'}{agent_reply#*$'\r\n\r\n'}
}
gate_open() { # whether a daemon answers with its startup gate open
  agent_get /v1/status && [[ $agent_reply == *'"gate":"open"'* ]]
}
# Every wait is bounded in seconds of wall time, not in a count of looks: a
# count made the bound depend on what each look cost, and once looks cost
# nothing, 100 looks 0.1 s apart was a 10 s bound that a daemon's start on a
# loaded CI host overran (the fresh-clone CI run at bf64ff9).
wait_until() { # SECONDS WHAT COMMAND...: until COMMAND succeeds; else says WHAT never happened, and fails
  local seconds=$1 what=$2 deadline
  shift 2
  for ((deadline = SECONDS + seconds; SECONDS < deadline; )); do
    "$@" && return 0
    nap 0.1
  done
  echo "$what" >&2; return 1
}
wait_for_socket() { wait_until 60 "the daemon's socket never appeared" test -S /run/aks-flex-node/agent.sock; }
wait_for_gate() { # until the daemon takes changes (its startup gate is open)
  wait_until 120 "the daemon's startup gate never opened" gate_open
}
# The host root's names, types, modes and link targets, and each slot's
# inode, size and modification time: what a refused or crashed upgrade must
# leave as it was. A slot written in place gets a new mtime and one replaced
# a new inode, so its identity says what a digest of its 135 MB did, without
# reading them: hashing both slots around every case was most of a refusal
# test's CPU, and a CI run under load timed one out. (Not the ctime: the
# daemon's hard link of the nspawn helper to the slot changes it.)
layout_hash() {
  {
    find /opt/unbounded -printf '%p %y %m %l\n'
    find /opt/unbounded/agent/lib/aks-flex-node -maxdepth 1 -type f -name 'aks-flex-node-*' -printf '%p %i %s %T@\n' 2>/dev/null
  } | sort | sha256sum | cut -c1-16
}
`;

/**
 * Runs a bash script as root in private mount and network namespaces over a
 * throwaway host: /opt, /usr/local, /run, /srv, /var/lib, /var/log and /tmp
 * are empty tmpfs mounts and /etc is an overlay, all gone when the
 * namespace's last process exits. `$BINARY` names the executable under test.
 */
export function runOnPrivateHost(
  script: string,
  timeoutMs = 60_000,
  env: Record<string, string> = {},
): HostRun {
  const host = privateHostCommand(script, env);
  try {
    const result = spawnSync('unshare', host.args, {
      env: host.env,
      encoding: 'utf8',
      timeout: timeoutMs,
    });
    // A timeout gives back what the host printed until then, as the async
    // form does: a bare ETIMEDOUT left a CI failure with nothing to read.
    if (result.error !== undefined && !isTimeout(result.error)) throw result.error;
    const stderr =
      result.error === undefined ? result.stderr : `${result.stderr}\n${killedAfter(timeoutMs)}`;
    return {
      status: result.error === undefined ? (result.status ?? -1) : -1,
      stdout: result.stdout,
      stderr,
    };
  } finally {
    rmSync(host.scratch, { recursive: true, force: true });
  }
}

/** What both forms add to a timed-out host's stderr. */
function killedAfter(timeoutMs: number): string {
  return `the private host was killed after its ${String(timeoutMs)} ms timeout`;
}

function isTimeout(error: Error): boolean {
  return (error as NodeJS.ErrnoException).code === 'ETIMEDOUT';
}

/**
 * The same private host, run without blocking the worker, so that a file's
 * independent trials overlap. Most of a crash trial's time is spent waiting
 * (a killed holder's lockfile going stale, the daemon's stability interval),
 * not computing, so several at once cost little more CPU than one.
 */
export function runOnPrivateHostAsync(
  script: string,
  timeoutMs = 60_000,
  env: Record<string, string> = {},
): Promise<HostRun> {
  const host = privateHostCommand(script, env);
  return new Promise<HostRun>((resolve, reject) => {
    // A process group of its own, so a timeout kills the daemons the scenario
    // started in the background too (bash without job control keeps them in
    // its group); killing only bash left them running in the namespace.
    const child = spawn('unshare', host.args, {
      env: host.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) stderr += `\n${killedAfter(timeoutMs)}`;
      resolve({ status: timedOut ? -1 : (code ?? -1), stdout, stderr });
    });
  }).finally(() => {
    rmSync(host.scratch, { recursive: true, force: true });
  });
}

/**
 * Runs `trial` for each item, at most `limit` at a time, and returns the
 * results in the items' order (the printed tables stay in failpoint order).
 */
export async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  trial: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await trial(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

function privateHostCommand(
  script: string,
  env: Record<string, string>,
): { args: string[]; env: Record<string, string>; scratch: string } {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'private-host-'));
  return {
    // A network namespace too: only loopback, so nothing a scenario starts
    // reaches a network, and abstract socket names (the daemon's guard before
    // it became a flock in /run) stay apart between suites running in parallel.
    args: ['-m', '-n', '--propagation', 'private', 'bash', '-c', `${prelude}\n${script}`],
    env: {
      PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
      BINARY: binary,
      SCRATCH: scratch,
      WORKSPACE: workspace,
      ...env,
    },
    scratch,
  };
}

/** Parses the last stdout line of a run as JSON, with the run in the error when it is not. */
export function lastJsonLine(run: HostRun): unknown {
  const line = run.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line) as unknown;
  } catch {
    throw new Error(
      `expected JSON on the last line; status ${run.status}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`,
    );
  }
}

/** A literal `$` for bash parameter expansions inside String.raw templates. */
const D = '$';

/**
 * Bash helpers for scenarios that run the daemon unmanaged (no systemd):
 * after a switch it exits, and the scenario starts it again from `current`,
 * as systemd would. `ARM=<failpoint> start_daemon` arms a failpoint; only
 * then may the daemon die before it answers.
 */
export const unmanagedDaemon = String.raw`
CUR=/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current
LG=/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-last-good
echo '{}' > /etc/cfg.json
daemon_pid=
upgrade_pid=
trap 'kill -KILL $daemon_pid $upgrade_pid 2>/dev/null || true' EXIT
start_daemon() { # [binary]
  AKS_FLEX_NODE_FAILPOINT="${D}{ARM:-}" "${D}{1:-$CUR}" agent --config /etc/cfg.json >>/tmp/daemon.log 2>&1 &
  daemon_pid=$!
  # Answering is not enough: changes are refused until the startup gate opens
  # (after the stability interval, the judgement and the move).
  # A daemon that answered and then exited to restart (a rollback it judged) is fine too.
  # Asked on the socket (agent_get), as run_daemon_until_exit_or_gate does,
  # not with "$BINARY" status: each start of the 135 MB executable costs
  # about 0.2 s of CPU, and this loop asks again as soon as one answer is in,
  # through the daemon's whole start, on a machine the daemon needs (the
  # CLI's status is tested in its own files).
  local answered= deadline=$((SECONDS + 120))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if agent_get /v1/status; then
      answered=yes
      case "$agent_reply" in *'"gate":"open"'*) return 0 ;; esac
    fi
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
      [ -n "${D}{ARM:-}" ] && return 0
      [ -n "$answered" ] && return 0
      break
    fi
    nap 0.1
  done
  echo "the daemon never answered" >&2; cat /tmp/daemon.log >&2; return 1
}
# Both waits allow 120 s of wall time, where 300 looks 0.1 s apart allowed
# about 30 s. On a loaded CI host the daemon's start, and the extraction and
# check of a 135 MB release before its exit to restart, take several times
# what they take alone (likely what failed upgrade-exits in a CI run whose
# tail did not say). A daemon that never answers or never exits still fails
# the scenario, only later.
wait_daemon_exit() {
  local deadline=$((SECONDS + 120))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if ! kill -0 "$daemon_pid" 2>/dev/null; then wait "$daemon_pid" 2>/dev/null || true; return 0; fi
    nap 0.1
  done
  echo "the daemon did not exit" >&2; return 1
}
stop_daemon() { kill -TERM "$daemon_pid" 2>/dev/null || true; wait_daemon_exit; }
install_agent() { start_daemon "$BINARY"; stop_daemon; }
`;

/** The `key=value` lines a scenario printed, as an object. */
export function facts(stdout: string): Record<string, string> {
  return Object.fromEntries(
    stdout
      .split('\n')
      .filter((line) => /^\w+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}
