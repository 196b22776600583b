import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/** A literal `$` for bash parameter expansions inside String.raw templates. */
const D = '$';

const source = path.resolve(
  import.meta.dirname,
  '../../shared/hostroot/src/move/move-test-driver.ts',
);

/**
 * Bundles shared/hostroot's move driver into one file under /var/tmp (private
 * hosts replace /tmp), so a private host runs the library itself, killed at
 * failpoints and started again, without the daemon around it. The caller
 * removes `dir`.
 */
export async function bundleMoveDriver(): Promise<{ file: string; dir: string }> {
  const dir = mkdtempSync(path.join('/var/tmp', 'aks-flex-node-move-driver-'));
  const file = path.join(dir, 'driver.mjs');
  await build({
    entryPoints: [source],
    outfile: file,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    // Bundled CommonJS dependencies (pino) call require(); ESM has none of its own.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    logLevel: 'error',
  });
  return { file, dir };
}

/**
 * Bash for a scenario that drives the move: a host an earlier release left
 * under /usr/local (stand-in agents that answer `version`, blue/green links
 * with absolute targets, helpers, the agent unit naming /usr/local), and
 * `daemon_start`, which runs the driver as the agent unit would: from the
 * binary its ExecStart names, resolved as /proc/self/exe is.
 */
export const moveHost = String.raw`
UNIT=/etc/systemd/system/aks-flex-node-agent.service
LIB=/usr/local/lib/aks-flex-node
# A stand-in agent. It cannot run from the host root while /etc/refuse-opt
# exists, as a binary SELinux or a loader denies there would not.
stand_in() { # name path
  cat >"$2" <<SCRIPT
#!/bin/sh
case "\$0" in /opt/*) if [ -e /etc/refuse-opt ]; then echo "refused: \$0" >&2; exit 126; fi ;; esac
[ "\$1" = version ] && echo "$1"
exit 0
SCRIPT
  chmod 0755 "$2"
}
legacy_host() {
  mkdir -p "$LIB" /usr/local/bin /usr/local/libexec /etc/systemd/system /etc/aks-flex-node
  mkdir -p /opt/unbounded/artifacts && echo manifest >/opt/unbounded/artifacts/manifest.json
  chmod 0750 /opt/unbounded
  stand_in blue "$LIB/aks-flex-node-blue"
  stand_in green "$LIB/aks-flex-node-green"
  ln -s "$LIB/aks-flex-node-green" "$LIB/aks-flex-node-current"
  ln -s "$LIB/aks-flex-node-blue" "$LIB/aks-flex-node-last-good"
  ln -s "$LIB/aks-flex-node-current" /usr/local/bin/aks-flex-node
  stand_in recovery "$LIB/aks-flex-node-recovery.sh"
  stand_in helper /usr/local/bin/unbounded-agent-nspawn-lifecycle
  printf 'dns\n' >/usr/local/libexec/unbounded-localdns-network && chmod 0700 /usr/local/libexec/unbounded-localdns-network
  printf 'other\n' >/usr/local/bin/other-tool
  printf '[Service]\nExecStart=%s agent --config /etc/aks-flex-node/config.json\n' "$LIB/aks-flex-node-current" >"$UNIT"
  # Blue ran here as a release that knows the host root; green records itself when it runs.
  sha256sum "$LIB/aks-flex-node-blue" | cut -d' ' -f1 >/etc/aks-flex-node/host-root-agents
  chmod 0600 /etc/aks-flex-node/host-root-agents
  ln -s /usr/local /opt/unbounded/agent
}
unit_binary() { sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$UNIT"; }
unit_runs() { "$(unit_binary)" version >/dev/null 2>&1 && echo yes || echo no; }
root_state() {
  if [ -L /opt/unbounded/agent ]; then echo linked
  elif [ -e /opt/unbounded/agent/.moving ]; then echo moving
  elif [ -d /opt/unbounded/agent ]; then echo installed
  else echo absent; fi
}
last=
daemon_start() { # runs one start; sets last to its JSON line, or "killed"
  local exe rc=0
  exe=$(readlink -f "$(unit_binary)")
  AKS_FLEX_NODE_FAILPOINT="${D}{ARM:-}" "$NODE" "$DRIVER" run --exe "$exe" >/tmp/driver.out 2>>/tmp/driver.log || rc=$?
  if [ "$rc" = 137 ]; then last=killed; else last=$(tail -1 /tmp/driver.out); fi
}
legacy_left() {
  local n=0 f
  for f in bin/aks-flex-node lib/aks-flex-node/aks-flex-node-blue lib/aks-flex-node/aks-flex-node-green \
    lib/aks-flex-node/aks-flex-node-current lib/aks-flex-node/aks-flex-node-last-good \
    lib/aks-flex-node/aks-flex-node-recovery.sh bin/unbounded-agent-nspawn-lifecycle \
    libexec/unbounded-localdns-network; do
    if [ -e "/usr/local/$f" ] || [ -L "/usr/local/$f" ]; then n=$((n + 1)); fi
  done
  echo "$n"
}
`;
