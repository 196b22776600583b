import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { binary, namespaceUnavailable, runOnPrivateHost } from './private-host.js';

// Refused upgrades through the real daemon: each bad archive or candidate is
// refused with a clear error, and the slots, links and signal are unchanged.
const unavailable = namespaceUnavailable();
if (unavailable !== undefined)
  console.warn(`SKIPPED test/namespace/upgrade-refusals: ${unavailable}`);

const D = '$';
/** The release archive the build wrote beside the binary: a real, large one. */
const releaseArchive = (() => {
  const dir = path.dirname(binary);
  const name = readdirSync(dir).find((entry) => /^aks-flex-node-.*\.tar\.gz$/.test(entry));
  return name === undefined ? '' : path.join(dir, name);
})();
const setup = String.raw`
echo '{}' > /etc/cfg.json
"$BINARY" agent --config /etc/cfg.json > /tmp/daemon.log 2>&1 &
daemon=$!
trap 'kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true' EXIT
wait_for_gate
member=aks-flex-node-linux-amd64
[ "$(uname -m)" = aarch64 ] && member=aks-flex-node-linux-arm64
# archive NAME: a release archive at /tmp/NAME.tar.gz from the files staged in /tmp/stage-NAME
# (gzip's fastest level: read once, and every level is read alike).
archive() { tar -C "/tmp/stage-$1" --owner=0 --group=0 --numeric-owner --use-compress-program='gzip -1' -cf "/tmp/$1.tar.gz" "${D}{@:2}"; }
refused() { # NAME [extra agent-upgrade args]: upgrade, and report the exit code and whether anything changed
  before=$(layout_hash)
  set +e
  "$BINARY" agent-upgrade --url "file:///tmp/$1.tar.gz" "${D}{@:2}" >"/tmp/$1.out" 2>"/tmp/$1.err"
  code=$?
  set -e
  after=$(layout_hash)
  echo "$1 exit=$code unchanged=$([ "$before" = "$after" ] && echo yes || echo no) signal=$([ -e /etc/aks-flex-node/agent-upgrade-signal.json ] && echo present || echo absent)"
  sed "s/^/$1 /" "/tmp/$1.err"
}
good_script='#!/bin/sh
echo "{\"version\":\"9.9.9\",\"commit\":\"x\",\"arch\":\"amd64\",\"node\":\"none\",\"capabilities\":[\"host-root\"]}"'
stage() { mkdir -p "/tmp/stage-$1"; }
`;

describe.skipIf(unavailable !== undefined)('refused upgrades through the daemon', () => {
  it('bad archives and candidates are refused with exit 3 (refused before anything changed) and change nothing', () => {
    const run = runOnPrivateHost(
      String.raw`${setup}
      stage traversal; mkdir -p /tmp/stage-traversal/sub; printf '%s\n' "$good_script" > /tmp/stage-traversal/$member; chmod 755 /tmp/stage-traversal/$member
      tar -C /tmp/stage-traversal/sub --owner=0 --group=0 -czPf /tmp/traversal.tar.gz ../$member
      refused traversal
      stage wrongname; printf '%s\n' "$good_script" > /tmp/stage-wrongname/other-agent; chmod 755 /tmp/stage-wrongname/other-agent; archive wrongname other-agent
      refused wrongname
      stage extra; printf '%s\n' "$good_script" > /tmp/stage-extra/$member; echo x > /tmp/stage-extra/README; chmod 755 /tmp/stage-extra/$member; archive extra $member README
      refused extra
      stage link; ln -s /bin/sh /tmp/stage-link/$member; archive link $member
      refused link
      stage empty; : > /tmp/stage-empty/$member; archive empty $member
      refused empty
      stage broken; printf '#!/bin/sh\nexit 1\n' > /tmp/stage-broken/$member; chmod 755 /tmp/stage-broken/$member; archive broken $member
      refused broken
      stage old; printf '#!/bin/sh\necho "aks-flex-node v0.9.0"\n' > /tmp/stage-old/$member; chmod 755 /tmp/stage-old/$member; archive old $member
      refused old
      head -c 1000000 "$ARCHIVE" > /tmp/truncated.tar.gz; refused truncated
      cp /tmp/extra.tar.gz /tmp/digest.tar.gz
      refused digest --sha256 0000000000000000000000000000000000000000000000000000000000000000
      "$BINARY" status --json | jq -r '"serving=" + .version.version'`,
      120_000,
      { ARCHIVE: releaseArchive },
    );
    expect(run.status, run.stderr).toBe(0);
    const cases = [
      'traversal',
      'wrongname',
      'extra',
      'link',
      'empty',
      'broken',
      'old',
      'truncated',
      'digest',
    ];
    for (const name of cases) {
      // issue#24.2: refused before the switch, not the rolled-back code (6) they all shared.
      expect(run.stdout, run.stdout).toContain(`${name} exit=3 unchanged=yes signal=absent`);
    }
    const reasons: Record<string, RegExp> = {
      traversal: /unsafe|\.\./,
      wrongname: /unexpected member "other-agent"/,
      extra: /unexpected member "README"/,
      link: /regular file|link/,
      empty: /empty/,
      broken: /does not run/,
      old: /predates the host root/,
      truncated: /truncat|end-of-archive|unexpected end/i,
      digest: /SHA-256|digest/,
    };
    for (const [name, reason] of Object.entries(reasons)) {
      const lines = run.stdout.split('\n').filter((line) => line.startsWith(`${name} error:`));
      expect(lines.join('\n'), `${name}:\n${run.stdout}`).toMatch(reason);
    }
    expect(run.stdout).toMatch(/^serving=0\.1\.0/m);
  });

  it('two concurrent upgrade requests: one runs, the other gets 409 at once', () => {
    const run = runOnPrivateHost(
      String.raw`${setup}
      cp "$ARCHIVE" /tmp/release.tar.gz
      body='{"source":{"url":"file:///tmp/release.tar.gz"}}'
      sock=/run/aks-flex-node/agent.sock
      curl -s -o /tmp/first.json -w 'first=%{http_code}\n' --unix-socket "$sock" -H 'content-type: application/json' -d "$body" http://agent/v1/agent-upgrades
      curl -s -o /tmp/second.json -w 'second=%{http_code} seconds=%{time_total}\n' --unix-socket "$sock" -H 'content-type: application/json' -d "$body" http://agent/v1/agent-upgrades
      jq -r '"code=" + .code' /tmp/second.json`,
      120_000,
      { ARCHIVE: releaseArchive },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('first=202');
    expect(run.stdout).toMatch(/second=409 seconds=0\.\d+/);
    expect(run.stdout).toContain('code=ACTIVATION_IN_PROGRESS');
  });
});
