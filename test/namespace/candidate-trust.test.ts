import { describe, expect, it } from 'vitest';
import { facts, namespaceUnavailable, runOnPrivateHost, unmanagedDaemon } from './private-host.js';

// Candidate trust (issue 28 item 2) with the built binary, as root, against
// a real unprivileged user (nobody, uid 65534, through setpriv): a candidate
// someone else could have written is refused before anything of it runs,
// and a trusted one runs only as the root-owned copy the command staged.
// The rule's every case is a row in shared/agentbinary's candidate-source-trust.test.ts.
const unavailable = namespaceUnavailable();
if (unavailable !== undefined) {
  console.warn(`SKIPPED test/namespace/candidate-trust: ${unavailable}`);
}

const slotDir = '/opt/unbounded/agent/lib/aks-flex-node';

// The attacker's payload leaves /run/attacker-ran when it runs: as root, that
// is the whole attack. The stand-in answers `version --json` as a release
// does, so an activation that trusted it would go on to switch it in.
const helpers = String.raw`${unmanagedDaemon}
# /var/tmp and /root are the machine's own in this namespace: private ones here.
mount -t tmpfs -o mode=1777 tmpfs /var/tmp
mount -t tmpfs -o mode=0700 tmpfs /root
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
payload() { # FILE: the attacker's wrapper
  printf '#!/bin/sh\ntouch /run/attacker-ran\necho "{\\"version\\":\\"9.9.9\\",\\"commit\\":\\"x\\",\\"arch\\":\\"amd64\\",\\"node\\":\\"24\\",\\"capabilities\\":[\\"host-root\\"]}"\n' >"$1"
}
report() {
  echo "current=$(readlink -f "$CUR")"
  [ -e /run/attacker-ran ] && echo payload=ran || echo payload=absent
  echo "snapshots=$(find /var/lib/aks-flex-node -name 'host-agent-activation-*' | wc -l)"
}
`;

function run(script: string) {
  const result = runOnPrivateHost(`${helpers}\n${script}`, 120_000);
  return { ...result, context: `status ${result.status}\n${result.stdout}\n${result.stderr}` };
}

const untrustedHint =
  'hint: anyone who can write the file or a directory above it decides what root runs';

describe.skipIf(unavailable !== undefined)('candidate trust on a private host', () => {
  it('issue28 a nobody-owned 0777 candidate in /var/tmp is refused (exit 3) and nothing of it runs', () => {
    const result = run(String.raw`
      install_agent
      payload /var/tmp/cand
      chown 65534:65534 /var/tmp/cand
      chmod 0777 /var/tmp/cand
      set +e
      "$BINARY" agent-upgrade --candidate /var/tmp/cand 2>/tmp/activate.err; echo "activate=$?"
      "$BINARY" agent-upgrade --candidate /var/tmp/cand --preflight 2>/tmp/preflight.err; echo "preflight=$?"
      set -e
      report
      cat /tmp/activate.err /tmp/preflight.err >&2`);
    expect(result.status, result.context).toBe(0);
    expect(facts(result.stdout), result.context).toEqual({
      activate: '3',
      preflight: '3',
      current: `${slotDir}/aks-flex-node-blue`,
      payload: 'absent',
      snapshots: '0',
    });
    expect(result.stderr).toContain(
      'error: the candidate /var/tmp/cand is not trusted: it is owned by uid 65534, not root (uid 0); it would run as root, so only root may be able to change it',
    );
    expect(result.stderr).toContain(untrustedHint);
  });

  it('issue28 a root-owned candidate in a directory nobody owns is refused, by the CLI and by the daemon', () => {
    const result = run(String.raw`
      install_agent
      mkdir -m 0755 /srv/drop
      chown 65534:65534 /srv/drop
      payload /srv/drop/cand
      chmod 0755 /srv/drop/cand
      # nobody cannot write the file, but owns the directory: the name is theirs to replace.
      as_nobody sh -c 'mv /srv/drop/cand /srv/drop/mine && cp -p /srv/drop/mine /srv/drop/cand' && echo swappable=yes
      chown 0:0 /srv/drop/cand
      set +e
      "$BINARY" agent-upgrade --candidate /srv/drop/cand 2>/tmp/activate.err; echo "activate=$?"
      set -e
      start_daemon
      # The daemon takes a binaryPath only from root clients, and judges it all the same.
      echo "daemon=$(curl -s -o /tmp/daemon.out -w '%{http_code}' --unix-socket /run/aks-flex-node/agent.sock \
        -H 'content-type: application/json' -d '{"source":{"binaryPath":"/srv/drop/cand"}}' \
        http://agent/v1/agent-upgrades)"
      echo "daemonCode=$(jq -r .code /tmp/daemon.out)"
      stop_daemon
      report
      cat /tmp/activate.err >&2; jq -r .detail /tmp/daemon.out >&2`);
    expect(result.status, result.context).toBe(0);
    expect(facts(result.stdout), result.context).toMatchObject({
      swappable: 'yes',
      activate: '3',
      daemonCode: 'UPGRADE_REFUSED',
      current: `${slotDir}/aks-flex-node-blue`,
      payload: 'absent',
      snapshots: '0',
    });
    expect(Number(facts(result.stdout).daemon)).toBeGreaterThanOrEqual(400);
    expect(result.stderr.match(/is in \/srv\/drop, which is owned by uid 65534/g)?.length).toBe(2);
  });

  it('issue28 the fixed name nobody created first: root copies a release over it, nobody swaps in a wrapper, and it is refused', () => {
    const result = run(String.raw`
      install_agent
      as_nobody sh -c 'umask 0; : >/var/tmp/aks-flex-node; chmod 0777 /var/tmp/aks-flex-node'
      # Root copies a release over it; the name stays nobody's (fs.protected_regular=0
      # allows the copy; where it is set, nobody copies the bytes: the same end state).
      cp "$BINARY" /var/tmp/aks-flex-node 2>/dev/null || as_nobody cp "$BINARY" /var/tmp/aks-flex-node
      echo "owner=$(stat -c %u /var/tmp/aks-flex-node)"
      payload /tmp/wrapper; chmod 0755 /tmp/wrapper
      as_nobody cp /tmp/wrapper /var/tmp/aks-flex-node
      set +e
      "$BINARY" agent-upgrade --candidate /var/tmp/aks-flex-node 2>/tmp/activate.err; echo "activate=$?"
      set -e
      report
      cat /tmp/activate.err >&2`);
    expect(result.status, result.context).toBe(0);
    expect(facts(result.stdout), result.context).toEqual({
      owner: '65534',
      activate: '3',
      current: `${slotDir}/aks-flex-node-blue`,
      payload: 'absent',
      snapshots: '0',
    });
    expect(result.stderr).toContain('is owned by uid 65534, not root (uid 0)');
  });

  it('issue28 a trusted candidate whose version probe rewrites its source: only the staged root-owned copies ever run', () => {
    const result = run(String.raw`
      install_agent
      install -d -m 0700 /root/aks-flex-node-release
      src=/root/aks-flex-node-release/aks-flex-node
      # The stand-in logs where it runs from, and replaces the file the operator
      # named with the payload, as a swap between the check and any later use would.
      printf '%s\n' '#!/bin/sh' \
        'echo "$0" >>/run/probes' \
        "cp /tmp/wrapper $src" \
        'echo "{\"version\":\"0.3.0-standin\",\"commit\":\"x\",\"arch\":\"amd64\",\"node\":\"24\",\"capabilities\":[\"host-root\"]}"' >"$src"
      chmod 0755 "$src"
      cp "$src" /tmp/standin.orig
      payload /tmp/wrapper; chmod 0755 /tmp/wrapper
      "$BINARY" agent-upgrade --candidate "$src" 2>/tmp/activate.err || { cat /tmp/activate.err >&2; exit 1; }
      report
      cmp -s "$src" /tmp/wrapper && echo source=swapped || echo source=kept
      cmp -s "${slotDir}/aks-flex-node-green" /tmp/standin.orig && echo green=standin || echo green=other
      echo "greenOwner=$(stat -c %u:%a ${slotDir}/aks-flex-node-green)"
      sed -e 's#/host-agent-activation-[^/]*/#/host-agent-activation-X/#' /run/probes | sort -u | sed 's/^/probe=/'`);
    expect(result.status, result.context).toBe(0);
    const lines = result.stdout.split('\n');
    expect(facts(result.stdout), result.context).toMatchObject({
      current: `${slotDir}/aks-flex-node-green`,
      payload: 'absent',
      snapshots: '0',
      source: 'swapped',
      green: 'standin',
      greenOwner: '0:755',
    });
    // The snapshot is probed, then the installed slot; never the name the operator gave.
    expect(lines.filter((line) => line.startsWith('probe=')).sort()).toEqual([
      `probe=${slotDir}/aks-flex-node-green`,
      'probe=/var/lib/aks-flex-node/host-agent-activation-X/candidate',
    ]);
  });
});
