import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { statusResponseSchema } from '@aks-flex-node/api';
import { failpoints } from '@aks-flex-node/failpoints';
import {
  binary,
  facts,
  lastJsonLine,
  namespaceUnavailable,
  runOnPrivateHost,
  unmanagedDaemon,
} from './private-host.js';

/** A literal `$` for bash parameter expansions inside templates. */
const D = '$';

const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/hardening: ${unavailable}`);

// The daemon by hand, stopped at the end of the script whatever happened.
const startDaemon = String.raw`
echo '{}' > /etc/daemon-config.json
"$BINARY" agent --config /etc/daemon-config.json > /tmp/daemon.log 2>&1 &
daemon=$!
trap 'kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true' EXIT
wait_for_socket || { cat /tmp/daemon.log >&2; exit 1; }`;

describe.skipIf(unavailable !== undefined)('hardening on a private host', () => {
  it('issue12#1 an unprivileged user holding the old abstract guard name does not block the daemon', () => {
    // The guard before this issue was the abstract name below; any user could bind it.
    const run = runOnPrivateHost(String.raw`
      runuser -u nobody -- /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind("\0aks-flex-node-daemon:/run/aks-flex-node/agent.sock")
print("bound", flush=True)
time.sleep(60)' > /tmp/squatter.out &
      squatter=$!
      for _ in $(seq 1 50); do grep -q bound /tmp/squatter.out && break; sleep 0.1; done
      grep -q bound /tmp/squatter.out
      ${startDaemon}
      "$BINARY" status --json
      kill "$squatter"`);
    expect(run.status, run.stderr).toBe(0);
    expect(statusResponseSchema.parse(lastJsonLine(run)).daemon.socket).toBe('self-bound');
  });

  it('issue12#1 nobody cannot open the guard file, and a second daemon is still refused with exit 4', () => {
    const run = runOnPrivateHost(String.raw`
      ${startDaemon}
      echo "lock=$(stat -c '%a %U' /run/aks-flex-node/daemon.lock) dir=$(stat -c '%a %U' /run/aks-flex-node)"
      if runuser -u nobody -- flock -n /run/aks-flex-node/daemon.lock true 2>/dev/null; then echo nobody=locked; else echo nobody=refused; fi
      set +e; "$BINARY" agent --config /etc/daemon-config.json 2>/tmp/second.err; echo "second=$?"; set -e`);
    expect(run.status, run.stderr).toBe(0);
    // Both keep every other user out (issue 22 item 7: the file was 0644).
    expect(run.stdout).toMatch(/lock=600 root dir=750 root/);
    expect(run.stdout).toContain('nobody=refused');
    expect(run.stdout).toContain('second=4');
  });

  it('issue12#1 a killed daemon leaves no guard behind: the next one starts at once', () => {
    const run = runOnPrivateHost(String.raw`
      echo '{}' > /etc/daemon-config.json
      "$BINARY" agent --config /etc/daemon-config.json > /tmp/first.log 2>&1 &
      first=$!
      wait_for_socket
      kill -KILL "$first"; wait "$first" 2>/dev/null || true
      # The killed daemon's socket file stays; the new daemon replaces it once it holds the guard.
      rm /run/aks-flex-node/agent.sock
      ${startDaemon}
      "$BINARY" status --json`);
    expect(run.status, run.stderr).toBe(0);
    expect(statusResponseSchema.parse(lastJsonLine(run)).daemon.pid).toBeGreaterThan(0);
  });

  it('issue12#2 SIGTERM with a half-sent request pending: the daemon exits 0 within the grace bound', () => {
    const run = runOnPrivateHost(String.raw`
      ${startDaemon}
      /usr/bin/python3 -c '
import socket, time
s = socket.socket(socket.AF_UNIX)
s.connect("/run/aks-flex-node/agent.sock")
s.sendall(b"POST /v1/host-root/migrate HTTP/1.1\r\nHost: agent\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"pa")
print("half-sent", flush=True)
time.sleep(60)' > /tmp/client.out &
      client=$!
      for _ in $(seq 1 50); do grep -q half-sent /tmp/client.out && break; sleep 0.1; done
      start=$(date +%s%N)
      kill -TERM "$daemon"
      set +e; timeout 30 tail --pid="$daemon" -f /dev/null; wait "$daemon"; code=$?; set -e
      trap - EXIT
      end=$(date +%s%N)
      kill "$client" 2>/dev/null || true
      echo "exit=$code ms=$(( (end - start) / 1000000 ))"`);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const match = /exit=(\d+) ms=(\d+)/.exec(run.stdout);
    expect(match?.[1], run.stdout).toBe('0');
    // The grace period is 5 s; a daemon that waits on the client would hit the 30 s timeout.
    expect(Number(match?.[2])).toBeLessThan(10_000);
  });
});

/** The release archive the build wrote beside the binary. */
const releaseArchive = (() => {
  const dir = path.dirname(binary);
  const name = readdirSync(dir).find((entry) => /^aks-flex-node-.*\.tar\.gz$/.test(entry));
  return name === undefined ? '' : path.join(dir, name);
})();

// Slots, links and the signal: what a refused, cancelled or crashed upgrade must leave as it was.
const layoutHelpers = String.raw`${unmanagedDaemon}
SIGNAL=/etc/aks-flex-node/agent-upgrade-signal.json
# Cheaper, for many cases in a row: any write changes an inode, size or mtime.
quick_hash() {
  find /opt/unbounded /etc/aks-flex-node /etc/systemd/system -printf '%p %y %m %l %i %s %T@\n' | sort | sha256sum | cut -c1-16
}
leftovers() {
  find /var/lib/aks-flex-node /opt/unbounded/agent/lib/aks-flex-node/ -maxdepth 2 \
    \( -name 'agent-upgrade-*.tar.gz' -o -name '.agent-upgrade-*' -o -name '.aks-flex-node-candidate-*' \) | sort
}
wait_judged() { wait_until 60 "the signal was never judged" test ! -e "$SIGNAL"; }
`;

describe.skipIf(unavailable !== undefined)('crashes leave nothing behind (issue 12 item 3)', () => {
  it.each([failpoints.upgradeDownloading, failpoints.upgradeExtracting])(
    'issue12#3 killed at %s: the next start removes the temporary files, slots unchanged',
    (fp) => {
      const run = runOnPrivateHost(
        String.raw`${layoutHelpers}
        install_agent
        before=$(layout_hash)
        ARM="$FP" start_daemon
        "$BINARY" agent-upgrade --url "file://$ARCHIVE" --json --timeout 30 >/tmp/upgrade.out 2>&1 || true
        wait_daemon_exit
        echo "hits=$(grep -c "failpoint $FP: killing" /tmp/daemon.log || true)"
        echo "left=$(leftovers | wc -l)"
        start_daemon; wait_judged; stop_daemon
        echo "after_left=$(leftovers | wc -l)"
        echo "unchanged=$([ "$before" = "$(layout_hash)" ] && echo yes || echo no)"
        echo "signal=$([ -e "$SIGNAL" ] && echo present || echo absent)"
        grep -c 'removed a temporary file a stopped upgrade left behind' /tmp/daemon.log | sed 's/^/swept=/'`,
        120_000,
        { ARCHIVE: releaseArchive, FP: fp },
      );
      const seen = facts(run.stdout);
      const context = `${run.stdout}\n${run.stderr}`;
      expect(run.status, context).toBe(0);
      expect(seen.hits, context).toBe('1');
      // The kill really left something: the test would prove nothing otherwise.
      expect(Number(seen.left), context).toBeGreaterThanOrEqual(1);
      expect(seen.after_left, context).toBe('0');
      expect(seen.unchanged, context).toBe('yes');
      expect(seen.signal, context).toBe('absent');
      expect(Number(seen.swept), context).toBeGreaterThanOrEqual(1);
    },
  );
});

// A server on the namespace's own loopback that accepts, sends headers and then nothing.
const stalledServer = String.raw`
ip link set lo up
/usr/bin/python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 8089)); s.listen(8)
print("listening", flush=True)
held = []
while True:
    c, _ = s.accept(); c.recv(65536)
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n"); held.append(c)
' > /tmp/server.out 2>&1 &
server=$!
for _ in $(seq 1 50); do grep -q listening /tmp/server.out && break; sleep 0.1; done
begin() { # begins an upgrade from the stalled server; prints the operation id
  curl -s --unix-socket /run/aks-flex-node/agent.sock -H 'content-type: application/json' \
    -d '{"source":{"url":"http://127.0.0.1:8089/aks-flex-node-linux-amd64.tar.gz"}}' \
    http://agent/v1/agent-upgrades | jq -r .id
}
operation() { "$BINARY" status --json >/dev/null; curl -s --unix-socket /run/aks-flex-node/agent.sock "http://agent/v1/operations/$1"; }
`;

describe.skipIf(unavailable !== undefined)(
  'stalls end and upgrades can be cancelled (issue 12 item 4)',
  () => {
    it('issue12#4 agent-upgrade --cancel stops a download from a stalled server; slots and links unchanged', () => {
      const run = runOnPrivateHost(
        String.raw`${layoutHelpers}${stalledServer}
      install_agent; start_daemon
      before=$(layout_hash)
      id=$(begin)
      sleep 1
      echo "phase=$(operation "$id" | jq -r .phase)"
      set +e; "$BINARY" agent-upgrade --cancel "$id" > /tmp/cancel.out 2>&1; echo "cancel_exit=$?"; set -e
      cat /tmp/cancel.out
      echo "state=$(operation "$id" | jq -r .state)"
      set +e; "$BINARY" agent-upgrade --cancel "$id" 2>/tmp/again.err; echo "again_exit=$?"; set -e
      echo "unchanged=$([ "$before" = "$(layout_hash)" ] && echo yes || echo no)"
      echo "signal=$([ -e "$SIGNAL" ] && echo present || echo absent)"
      echo "left=$(leftovers | wc -l)"
      # The lock is free again: another mutation is accepted at once.
      id2=$(begin); echo "second=$(operation "$id2" | jq -r .state)"
      "$BINARY" agent-upgrade --cancel "$id2" >/dev/null
      kill "$server"; stop_daemon`,
        90_000,
      );
      const seen = facts(run.stdout);
      const context = `${run.stdout}\n${run.stderr}`;
      expect(run.status, context).toBe(0);
      expect(seen.phase, context).toBe('downloading');
      expect(seen.cancel_exit, context).toBe('0');
      expect(run.stdout).toMatch(
        /AgentUpgrade (upgrade-\S+) cancelled: AgentUpgrade \1 was cancelled on request/,
      );
      expect(seen.state, context).toBe('failed');
      // A second cancel is refused with the documented code's exit (3, refused).
      expect(seen.again_exit, context).toBe('3');
      expect(seen.unchanged, context).toBe('yes');
      expect(seen.signal, context).toBe('absent');
      expect(seen.left, context).toBe('0');
      expect(seen.second, context).toBe('running');
    });

    it('issue12#4 a stalled download fails on its own within the stall bound, and frees the lock', () => {
      const run = runOnPrivateHost(
        String.raw`${layoutHelpers}${stalledServer}
      install_agent; start_daemon
      before=$(layout_hash)
      start=$(date +%s)
      id=$(begin)
      for _ in $(seq 1 90); do [ "$(operation "$id" | jq -r .state)" = running ] || break; sleep 1; done
      echo "seconds=$(( $(date +%s) - start ))"
      operation "$id" | jq -r '"state=" + .state, "message=" + .message'
      echo "unchanged=$([ "$before" = "$(layout_hash)" ] && echo yes || echo no)"
      echo "left=$(leftovers | wc -l)"
      kill "$server"; stop_daemon`,
        150_000,
      );
      const seen = facts(run.stdout);
      const context = `${run.stdout}\n${run.stderr}`;
      expect(run.status, context).toBe(0);
      expect(seen.state, context).toBe('failed');
      expect(seen.message, context).toMatch(/stalled: no bytes arrived for 30000 ms/);
      // The bound is 30 s; the old behaviour held the lock for the 10-minute timeout.
      expect(Number(seen.seconds), context).toBeLessThan(60);
      expect(seen.unchanged, context).toBe('yes');
      expect(seen.left, context).toBe('0');
    }, 150_000);
  },
);

// Hostile sources through the real daemon: each is refused before anything changes.
const hostileSources: [string, string, number, string][] = [
  ['ftp scheme', '{"source":{"url":"ftp://127.0.0.1/a.tar.gz"}}', 400, 'INVALID_ARGUMENT'],
  ['data URL', '{"source":{"url":"data:application/gzip;base64,H4sI"}}', 400, 'INVALID_ARGUMENT'],
  [
    'user-info in the URL',
    '{"source":{"url":"https://user:pw@127.0.0.1/a.tar.gz"}}',
    400,
    'INVALID_ARGUMENT',
  ],
  [
    'a NUL in binaryPath',
    '{"source":{"binaryPath":"/var/tmp/a\\u0000b"}}',
    400,
    'INVALID_ARGUMENT',
  ],
  [
    'a missing binaryPath file',
    '{"source":{"binaryPath":"/var/tmp/no-such-binary"}}',
    422,
    'UPGRADE_REFUSED',
  ],
  ['a directory as binaryPath', '{"source":{"binaryPath":"/etc"}}', 422, 'UPGRADE_REFUSED'],
  ['/dev/zero as binaryPath', '{"source":{"binaryPath":"/dev/zero"}}', 422, 'UPGRADE_REFUSED'],
  ['a null body on migrate', 'null', 400, 'INVALID_ARGUMENT'],
];

describe.skipIf(unavailable !== undefined)(
  'hostile inputs through the daemon (issue 12 corpus)',
  () => {
    it('sources, bodies, URLs and headers are refused with problem+json and change nothing', () => {
      const cases = hostileSources
        .map(([name, body, ,]) => {
          const route = name.includes('migrate') ? 'host-root/migrate' : 'agent-upgrades';
          return String.raw`try_body '${name}' '${route}' '${body.replace(/'/g, `'\\''`)}'`;
        })
        .join('\n');
      const run = runOnPrivateHost(
        String.raw`${layoutHelpers}
      install_agent; start_daemon
      mkdir -p /etc/aks-flex-node
      sock=/run/aks-flex-node/agent.sock
      report() { # NAME: the answer in /tmp/answer, and whether anything changed
        echo "$1|status=$(cat /tmp/status)|type=$(cat /tmp/type)|code=$(jq -r .code /tmp/answer 2>/dev/null)|unchanged=$([ "$before" = "$(quick_hash)" ] && echo yes || echo no)|signal=$([ -e "$SIGNAL" ] && echo present || echo absent)"
      }
      try_body() {
        before=$(quick_hash)
        curl -s -o /tmp/answer -w '%{http_code} %{content_type}\n' --unix-socket "$sock" \
          -H 'content-type: application/json' --data-binary "$3" "http://agent/v1/$2" | { read -r s t; echo "$s" > /tmp/status; echo "$t" > /tmp/type; }
        report "$1"
      }
      try_raw() { # NAME REQUEST: raw bytes on the socket
        before=$(quick_hash)
        /usr/bin/python3 -c '
import socket, sys, json
s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
data = b""
while True:
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        break
    if not chunk: break
    data += chunk
head, _, body = data.partition(b"\r\n\r\n")
lines = head.decode().split("\r\n")
open("/tmp/status", "w").write(lines[0].split()[1] + "\n")
ctype = [l.split(":", 1)[1].strip() for l in lines[1:] if l.lower().startswith("content-type:")]
open("/tmp/type", "w").write((ctype[0] if ctype else "") + "\n")
open("/tmp/answer", "wb").write(body)
' "$sock" "$2"
        report "$1"
      }
      ${cases}
      try_raw 'bad percent-escape' 'GET /v1/operations/%zz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'
      try_raw 'over-long id' "GET /v1/operations/$(head -c 3000 /dev/zero | tr '\0' a) HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
      try_raw 'oversized headers' "GET /v1/status HTTP/1.1\r\nHost: a\r\nX-Pad: $(head -c 70000 /dev/zero | tr '\0' a)\r\n\r\n"
      try_raw 'not HTTP' 'HELLO\r\n\r\n'
      stop_daemon`,
        120_000,
      );
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      const rows = Object.fromEntries(
        run.stdout
          .split('\n')
          .filter((line) => line.includes('|status='))
          .map((line) => [line.slice(0, line.indexOf('|')), line]),
      );
      const expected: [string, number, string][] = [
        ...hostileSources.map(([name, , status, code]): [string, number, string] => [
          name,
          status,
          code,
        ]),
        ['bad percent-escape', 400, 'INVALID_ARGUMENT'],
        ['over-long id', 400, 'INVALID_ARGUMENT'],
        ['oversized headers', 431, 'REQUEST_HEADERS_TOO_LARGE'],
        ['not HTTP', 400, 'INVALID_ARGUMENT'],
      ];
      for (const [name, status, code] of expected) {
        expect(rows[name], run.stdout).toBe(
          `${name}|status=${status}|type=application/problem+json; charset=utf-8|code=${code}|unchanged=yes|signal=absent`,
        );
      }
    });
  },
);

describe.skipIf(unavailable !== undefined)('CLI edge cases (issue 12 item 7)', () => {
  it('issue12#7 each bad command line or config gets its documented exit code and hint, changing nothing', () => {
    const run = runOnPrivateHost(
      String.raw`${layoutHelpers}
      install_agent; start_daemon
      before=$(layout_hash)
      mkdir /tmp/config-dir; ln -s /tmp/loop-b /tmp/loop-a; ln -s /tmp/loop-a /tmp/loop-b
      try() { # NAME ARGS...
        set +e; "$BINARY" "${D}{@:2}" >/tmp/out 2>/tmp/err; code=$?; set -e
        echo "$1|exit=$code|$(grep -m1 '^error:' /tmp/err)|$(grep -m1 '^hint:' /tmp/err)"
      }
      try planned-migrate host-root --migrate --planned
      try no-message recover-agent-upgrade
      try empty-message recover-agent-upgrade --message ''
      try config-dir start --config /tmp/config-dir
      try config-loop start --config /tmp/loop-a
      try config-zero start --config /dev/zero
      echo "unchanged=$([ "$before" = "$(layout_hash)" ] && echo yes || echo no)"
      stop_daemon`,
      90_000,
    );
    const context = `${run.stdout}\n${run.stderr}`;
    expect(run.status, context).toBe(0);
    const line = (name: string) =>
      run.stdout.split('\n').find((l) => l.startsWith(`${name}|`)) ?? '';
    expect(line('planned-migrate')).toMatch(
      /\|exit=2\|error: host-root: --planned .* give one\|hint: /,
    );
    expect(line('no-message')).toMatch(
      /\|exit=2\|error: recover-agent-upgrade needs --message TEXT/,
    );
    expect(line('empty-message')).toMatch(/\|exit=2\|/);
    expect(line('config-dir')).toMatch(
      /\|exit=2\|error: .*it is a directory, not a regular file\|hint: name the JSON config file/,
    );
    expect(line('config-loop')).toMatch(
      /\|exit=2\|error: .*symbolic links form a loop\|hint: point the path/,
    );
    expect(line('config-zero')).toMatch(/\|exit=2\|error: .*character device, not a regular file/);
    expect(run.stdout).not.toMatch(/nothing to do/);
    expect(run.stdout).toContain('unchanged=yes');
  });
});
