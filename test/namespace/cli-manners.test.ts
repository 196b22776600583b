import { describe, expect, it } from 'vitest';
import { facts, namespaceUnavailable, runOnPrivateHost } from './private-host.js';

// The command line as an operator or a Go release's script meets it, with the
// built executable on a throwaway host.
const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/cli-manners: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('the command line', () => {
  it('--help and -h, on the top level and on every command, print usage on stdout and exit 0', () => {
    const commands = [
      'version',
      'status',
      'operations',
      'host-root',
      'start',
      'agent-upgrade',
      'recover-agent-upgrade',
      'agent',
    ];
    const run = runOnPrivateHost(String.raw`
      check() { # NAME ARGS...: exit code, usage on stdout, nothing on stderr
        local name=$1; shift
        set +e; "$BINARY" "$@" >/tmp/out 2>/tmp/err; code=$?; set -e
        echo "$name=$code $(head -1 /tmp/out) err=$(wc -c </tmp/err)"
      }
      check top --help
      check topShort -h
      for command in ${commands.join(' ')}; do check "${'$'}{command//-/_}" "$command" --help; done
      check upgradeShort agent-upgrade -h
      [ ! -e /opt/unbounded ] && echo untouched=yes || echo untouched=no`);
    expect(run.status, run.stderr).toBe(0);
    const seen = facts(run.stdout);
    expect(seen.top).toBe('0 usage: aks-flex-node <command> [flags] err=0');
    expect(seen.topShort).toBe(seen.top);
    for (const command of commands) {
      expect(seen[command.replaceAll('-', '_')], command).toMatch(
        new RegExp(
          `^0 usage: aks-flex-node ${command} .* err=0$|^0 usage: aks-flex-node ${command} err=0$`,
        ),
      );
    }
    expect(seen.upgradeShort).toBe(seen.agent_upgrade);
    expect(seen.untouched).toBe('yes');
  });

  it('--version prints the version, as `version` does', () => {
    const run = runOnPrivateHost(String.raw`
      echo "flag=$("$BINARY" --version)"
      echo "command=$("$BINARY" version)"
      echo "arch=$("$BINARY" version --json | jq -r .arch)"`);
    expect(run.status, run.stderr).toBe(0);
    const seen = facts(run.stdout);
    expect(seen.flag).toMatch(/^aks-flex-node \d+\.\d+\.\d+/);
    expect(seen.flag).toBe(seen.command);
    expect(seen.arch).toBe(process.arch === 'arm64' ? 'arm64' : 'amd64');
  });

  it('not being root is its own error and exit status (8), and changes nothing', () => {
    const run = runOnPrivateHost(String.raw`
      legacy_install
      nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
      cp "$BINARY" /tmp/aks-flex-node; chmod 755 /tmp/aks-flex-node
      for command in "start" "agent-upgrade --candidate /tmp/aks-flex-node" "host-root --migrate" "recover-agent-upgrade --message test"; do
        set +e; nobody /tmp/aks-flex-node $command >/dev/null 2>/tmp/err; code=$?; set -e
        name=${'$'}{command%% *}
        echo "${'$'}{name//-/_}=$code $(grep -c 'must run as root' /tmp/err)"
      done
      [ ! -e /opt/unbounded ] && echo untouched=yes || echo untouched=no`);
    expect(run.status, run.stderr).toBe(0);
    expect(facts(run.stdout)).toEqual({
      start: '8 1',
      agent_upgrade: '8 1',
      host_root: '8 1',
      recover_agent_upgrade: '8 1',
      untouched: 'yes',
    });
  });

  it('bare host-root prints the planned root as one bare path; --resolved where the files are now', () => {
    const run = runOnPrivateHost(String.raw`
      legacy_install
      "$BINARY" host-root | od -c | head -2 | tr -s ' ' > /tmp/bytes
      echo "bare=$("$BINARY" host-root)"
      echo "lines=$("$BINARY" host-root | wc -l)"
      echo "resolved=$("$BINARY" host-root --resolved)"`);
    expect(run.status, run.stderr).toBe(0);
    expect(facts(run.stdout)).toMatchObject({
      bare: '/usr/local',
      lines: '1',
      resolved: '/opt/unbounded/agent',
    });
  });

  it('preflight takes --config and --output as bootstrap.sh passes them; a config that does not read fails naming it', () => {
    const run = runOnPrivateHost(String.raw`
      printf '%s\n' '{"azure":{"tenantId":"t","arc":{"enabled":false}},"agent":{"logLevel":"info"}}' > /etc/go.json
      set +e
      "$BINARY" preflight --config /etc/go.json --output text > /tmp/ok.out 2>&1; echo "ok_exit=$?"
      "$BINARY" preflight --config /etc/missing.json --output text > /tmp/bad.out 2>&1; echo "bad_exit=$?"
      "$BINARY" preflight --output yaml > /tmp/yaml.out 2>&1; echo "yaml_exit=$?"
      set -e
      echo "ok_last=$(tail -1 /tmp/ok.out)"
      grep -q /etc/missing.json /tmp/bad.out && echo bad_names=yes`);
    expect(run.status, run.stderr).toBe(0);
    expect(facts(run.stdout), run.stdout).toMatchObject({
      ok_exit: '0',
      ok_last: 'Preflight: ok',
      yaml_exit: '2',
      bad_names: 'yes',
    });
    expect(facts(run.stdout).bad_exit).not.toBe('0');
  });

  it('agent-upgrade --preflight with no candidate plans the running binary', () => {
    const run = runOnPrivateHost(String.raw`
      echo '{}' > /etc/cfg.json
      "$BINARY" agent --config /etc/cfg.json >/tmp/daemon.log 2>&1 & daemon=$!
      wait_for_gate
      kill -TERM "$daemon"; wait "$daemon" || true
      cp "$BINARY" /srv/aks-flex-node; chmod 755 /srv/aks-flex-node
      /srv/aks-flex-node agent-upgrade --preflight`);
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('Candidate: /srv/aks-flex-node');
    expect(lines).toContain('Preflight: no changes applied');
  });
});
