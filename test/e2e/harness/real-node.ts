import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import path from 'node:path';
import { repoRoot } from './e2e-paths.js';
import { goScriptConfig } from './go-script-config.js';
import type { Host } from './host.js';
import { layOutFixture, type Fixture } from './lay-out-fixture.js';
import { standInMachineTemplate } from './nspawn-stand-in.js';
import { refuseSharedNetwork } from './private-network.js';
import { productBinary } from './product.js';
import { runOrThrow } from './run-or-throw.js';
import { copyIn } from './write-host-file.js';

// A node as the Go releases leave it (spec agentbinary 1.2, daemon 6.2 and
// 8.1), laid out in a booted e2e host: the nspawn machines with their copy
// of the agent, their settings and hooks, LocalDNS, unbounded-net's
// WireGuard and overlay links with their policy routes and keys, the legacy
// bridge CNI, and a config the Go scripts wrote. The host boots with
// --private-network, so every link, rule and table lives only inside it.

/** The machines the Go releases provision. */
export const realNodeMachines = ['kube1', 'kube2'] as const;

/** The host's own network state the fixture adds beside the node's: reset must keep it. */
export const hostOwnNetwork = {
  /** A WireGuard-named link outside unbounded-net's range (wg51820–wg51899). */
  link: 'wg12345',
  /** A policy routing table outside that range. */
  table: 100,
} as const;

/** One link of the node, as laid out. */
export interface RealNodeLink {
  readonly name: string;
  /** The kind the Go releases create it as. */
  readonly kind: string;
  /** True when this kernel lacks that kind and a bridge of the same name stands in. */
  readonly standIn: boolean;
}

/** What {@link layOutRealNode} made, so a scenario can assert each part. */
export interface RealNode {
  readonly links: readonly RealNodeLink[];
  /** Whether the LocalDNS dummy exists: a kernel without dummy links cannot have it. */
  readonly localDnsDummy: boolean;
  /** Link kinds this kernel does not have, said loudly when the node was laid out. */
  readonly missingKinds: readonly string[];
  /** The lifecycle helper the hooks name, and the LocalDNS helper. */
  readonly helpers: { readonly nspawn: string; readonly localDns: string };
}

/** Options for {@link layOutRealNode}; every one has a default. */
export interface RealNodeOptions {
  /**
   * The root the Go release installed its helpers under: `/opt/unbounded/agent`
   * (default, a host-root release) or `/usr/local` (an earlier one).
   */
  readonly helperRoot?: string;
  /** Write the config the Go bootstrap.sh renders to /etc/aks-flex-node/config.json (default true). */
  readonly config?: boolean;
}

/** The node's links with the `ip link add` arguments of their real kind. */
const nodeLinks: readonly { name: string; kind: string; args: string }[] = [
  { name: 'wg51820', kind: 'wireguard', args: 'type wireguard' },
  { name: 'wg51821', kind: 'wireguard', args: 'type wireguard' },
  { name: 'geneve0', kind: 'geneve', args: 'type geneve id 1 remote 10.255.0.1' },
  { name: 'vxlan0', kind: 'vxlan', args: 'type vxlan id 1 dstport 4789' },
  { name: 'ipip0', kind: 'ipip', args: 'type ipip remote 10.255.0.1 local 10.255.0.2' },
  { name: 'unbounded0', kind: 'bridge', args: 'type bridge' },
  { name: 'cbr0', kind: 'bridge', args: 'type bridge' },
  // The retired 99-bridge.conf network's bridge.
  { name: 'cni0', kind: 'bridge', args: 'type bridge' },
];

const localDnsUnit = (helper: string) => `[Unit]
Description=LocalDNS network for the nspawn machines
Before=systemd-nspawn@kube1.service systemd-nspawn@kube2.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=${helper} up --interface localdns
ExecStop=${helper} down

[Install]
WantedBy=multi-user.target
`;

/** The nft state: LocalDNS's table as its helper writes it, and the CNI plugins' chain with a bridge rule and another network's. */
const nftRuleset = `add table ip unbounded_localdns
add chain ip unbounded_localdns output { type filter hook output priority raw; policy accept; }
add chain ip unbounded_localdns prerouting { type filter hook prerouting priority raw; policy accept; }
add rule ip unbounded_localdns output ip daddr 169.254.10.10 udp dport 53 notrack comment "unbounded-localdns: skip conntrack"
add rule ip unbounded_localdns prerouting ip daddr 169.254.10.10 udp dport 53 notrack comment "unbounded-localdns: skip conntrack"
add table inet cni_plugins_masquerade
add chain inet cni_plugins_masquerade masq_checks
add rule inet cni_plugins_masquerade masq_checks ip daddr != 224.0.0.0/4 masquerade comment "net: bridge, id: e2e"
add rule inet cni_plugins_masquerade masq_checks ip daddr != 224.0.0.0/4 masquerade comment "net: other, id: e2e"
`;

/**
 * The iptables (nat) side of the CNI plugins, as they leave it where they
 * masquerade with iptables: a `CNI-…` chain per container, filled and jumped
 * to from POSTROUTING by rules commented with the network's name. The bridge
 * network's chain goes at reset; another network's (podman's here) stays.
 */
export const cniNatChains = {
  bridge: 'CNI-e2e0b71d9e5c4a3f2b1c0d9e',
  other: 'CNI-e2e0a0ff0e1d2c3b4a596877',
} as const;

/** Bash that adds {@link cniNatChains}, each once (a rejoin lays the node out again). */
const iptablesNat = String.raw`
    nat_chain() { # chain network source subnet
      iptables --wait -t nat -n -L "$1" >/dev/null 2>&1 && return 0
      local comment="name: \"$2\" id: \"e2e\""
      iptables --wait -t nat -N "$1"
      iptables --wait -t nat -A "$1" -d "$4" -m comment --comment "$comment" -j ACCEPT
      iptables --wait -t nat -A "$1" ! -d 224.0.0.0/4 -m comment --comment "$comment" -j MASQUERADE
      iptables --wait -t nat -A POSTROUTING -s "$3" -m comment --comment "$comment" -j "$1"
    }
    nat_chain ${cniNatChains.bridge} bridge 10.244.0.5/32 10.244.0.0/24
    nat_chain ${cniNatChains.other} podman 10.88.0.5/32 10.88.0.0/16
`;

/** The legacy bridge CNI's config, inside each machine where its kubelet read it. */
const bridgeCniConf = `${JSON.stringify({ cniVersion: '0.3.1', name: 'bridge', type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true, ipam: { type: 'host-local', subnet: '10.244.0.0/24' } }, null, 2)}\n`;

function hookUnit(file: string, machine: string, helper: string): string {
  return readFileSync(path.join(repoRoot, 'systemd', file), 'utf8')
    .replaceAll('{{machine}}', machine)
    .replaceAll('{{helper}}', helper);
}

/**
 * Lays out a real-shaped node in the host; one call, for any scenario. The
 * machines are not started (their pre-start hook asks the agent's daemon):
 * see {@link startRealNodeMachines}. Link kinds this kernel lacks get a
 * bridge of the same name and are reported loudly; the LocalDNS dummy has no
 * stand-in, since a `localdns` that is no dummy is exactly what reset must
 * refuse. Refuses a host that shares this machine's network namespace.
 */
export async function layOutRealNode(host: Host, options: RealNodeOptions = {}): Promise<RealNode> {
  await refuseSharedNetwork(host, 'laying out a node');
  const root = options.helperRoot ?? '/opt/unbounded/agent';
  const helpers = {
    nspawn: `${root}/bin/unbounded-agent-nspawn-lifecycle`,
    localDns: `${root}/libexec/unbounded-localdns-network`,
  };
  const units = '/etc/systemd/system';
  const fixture: Record<string, Fixture[string]> = {
    // A nested machine cannot boot here; the stand-in carries the same hooks.
    [`${units}/systemd-nspawn@.service`]: { kind: 'file', content: standInMachineTemplate },
    [`${units}/unbounded-localdns-network.service`]: {
      kind: 'file',
      content: localDnsUnit(helpers.localDns),
    },
    [helpers.localDns]: {
      kind: 'file',
      content: '#!/bin/sh\necho "localdns-network $*"\n',
      mode: 0o700,
    },
    '/etc/wireguard': { kind: 'dir', mode: 0o700 },
    '/etc/wireguard/server.priv': {
      kind: 'file',
      content: 'cHJpdmF0ZS1rZXktb2YtdGhlLW5vZGU=\n',
      mode: 0o600,
    },
    '/etc/wireguard/server.pub': {
      kind: 'file',
      content: 'cHVibGljLWtleS1vZi10aGUtbm9kZQ==\n',
      mode: 0o600,
    },
  };
  if (options.config ?? true) {
    fixture['/etc/aks-flex-node/config.json'] = {
      kind: 'file',
      content: goScriptConfig,
      mode: 0o600,
    };
  }
  for (const machine of realNodeMachines) {
    const rootfs = `/var/lib/machines/${machine}`;
    fixture[`${rootfs}/etc/os-release`] = {
      kind: 'file',
      content: 'ID=ubuntu\nVERSION_ID="24.04"\n',
    };
    fixture[`${rootfs}/etc/cni/net.d/99-bridge.conf`] = { kind: 'file', content: bridgeCniConf };
    fixture[`/etc/systemd/nspawn/${machine}.nspawn`] = {
      kind: 'file',
      content: `[Exec]\nBoot=yes\nPrivateUsers=no\n\n[Network]\nVirtualEthernet=no\n\n[Files]\nBind=/dev/fuse\n`,
    };
    fixture[`${units}/unbounded-agent-regenerate-config@${machine}.service`] = {
      kind: 'file',
      content: hookUnit('unbounded-agent-regenerate-config@.service', machine, helpers.nspawn),
    };
    fixture[`${units}/systemd-nspawn@${machine}.service.d/override.conf`] = {
      kind: 'file',
      content: hookUnit('systemd-nspawn-override.conf', machine, helpers.nspawn),
    };
    fixture[`${units}/machines.target.wants/systemd-nspawn@${machine}.service`] = {
      kind: 'symlink',
      target: `${units}/systemd-nspawn@.service`,
    };
  }
  await layOutFixture(host, fixture);
  // The machine's exec-credential helper: a real copy of the agent (spec agentbinary 1.2).
  // Piped in once and copied inside the host for the other machine: every
  // host is a real-shaped node by default, so this runs for each scenario.
  const copies = realNodeMachines.map((m) => `/var/lib/machines/${m}/usr/local/bin/aks-flex-node`);
  await copyIn(host, productBinary, copies[0]!, 0o755);
  for (const copy of copies.slice(1)) {
    await runOrThrow(host, ['install', '-D', '-m', '0755', copies[0]!, copy]);
  }
  const node = await layOutNodeNetwork(host, helpers);
  await runOrThrow(host, ['systemctl', 'daemon-reload']);
  await runOrThrow(host, ['systemctl', 'start', 'unbounded-localdns-network.service']);
  return node;
}

/** The links, policy routes and nft tables; reports the kinds this kernel lacks. */
async function layOutNodeNetwork(host: Host, helpers: RealNode['helpers']): Promise<RealNode> {
  const links: RealNodeLink[] = [];
  const missingKinds = new Set<string>();
  const addLink = async (name: string, args: string): Promise<boolean> =>
    (await host.run(['/bin/bash', '-c', `ip link add ${name} ${args}`])).exitCode === 0;
  for (const link of nodeLinks) {
    const real = await addLink(link.name, link.args);
    if (!real) {
      missingKinds.add(link.kind);
      await runOrThrow(host, ['ip', 'link', 'add', link.name, 'type', 'bridge']);
    }
    links.push({ name: link.name, kind: link.kind, standIn: !real });
  }
  const localDnsDummy = await addLink('localdns', 'type dummy');
  if (!localDnsDummy) missingKinds.add('dummy');
  await runOrThrow(host, [
    '/bin/bash',
    '-euc',
    `
    ${localDnsDummy ? 'ip link set localdns up; ip address replace 169.254.10.10/32 dev localdns' : ''}
    # Idempotent: a scenario lays the node out again after a rejoin, and the
    # host's own state outlived the reset on purpose.
    rule() { ip "$1" rule show table "$3" | grep -q . || ip "$1" rule add from "$2" table "$3"; }
    ip link show ${hostOwnNetwork.link} >/dev/null 2>&1 || ip link add ${hostOwnNetwork.link} type bridge
    ip link set cbr0 up
    rule -4 10.244.0.0/16 51820
    rule -4 10.246.0.0/16 51821
    ip -4 route replace 10.245.0.0/16 dev cbr0 table 51820
    rule -6 fd00:10::/64 51899
    rule -4 192.0.2.0/24 ${hostOwnNetwork.table}
    ip -4 route replace 198.51.100.0/24 dev cbr0 table ${hostOwnNetwork.table}
    nft -f - <<'NFT'
${nftRuleset}NFT
    ${iptablesNat}
  `,
  ]);
  if (missingKinds.size > 0) {
    const standIns = links.filter((l) => l.standIn).map((l) => l.name);
    // Loud on purpose: a row that needs one of these kinds shows less than on a full kernel.
    console.warn(
      `REAL NODE on ${host.name}: THIS KERNEL HAS NO ${[...missingKinds].join(', ').toUpperCase()} LINKS. ` +
        `Stand-in bridges of the same name: ${standIns.join(', ') || 'none'}. ` +
        (localDnsDummy
          ? ''
          : 'No LocalDNS dummy could be made, so its removal is not shown on this host.'),
    );
  }
  return { links, localDnsDummy, missingKinds: [...missingKinds], helpers };
}

/**
 * Starts both machines (stand-ins) and so their pre-start hooks, which ask
 * the agent's daemon: call it once the product runs.
 */
export async function startRealNodeMachines(host: Host): Promise<void> {
  for (const machine of realNodeMachines) {
    await runOrThrow(host, ['systemctl', 'start', `systemd-nspawn@${machine}.service`], {
      timeoutMs: 120_000,
    });
  }
}

/**
 * One line `key=value` per fact a reset row asserts, from a single command
 * in the host: what of the node is still there.
 */
export async function readRealNodeFacts(host: Host): Promise<Record<string, string>> {
  const script = String.raw`
    present() { if [ -e "$1" ] || [ -L "$1" ]; then echo yes; else echo no; fi; }
    for m in kube1 kube2; do
      echo "machine.$m.state=$(systemctl show -p ActiveState --value systemd-nspawn@$m.service)"
      echo "machine.$m.rootfs=$(present /var/lib/machines/$m)"
      echo "machine.$m.nspawn=$(present /etc/systemd/nspawn/$m.nspawn)"
      echo "machine.$m.override=$(present /etc/systemd/system/systemd-nspawn@$m.service.d)"
      echo "machine.$m.regenerate=$(present /etc/systemd/system/unbounded-agent-regenerate-config@$m.service)"
      echo "machine.$m.enabled=$(present /etc/systemd/system/machines.target.wants/systemd-nspawn@$m.service)"
    done
    echo "localdns.unit=$(present /etc/systemd/system/unbounded-localdns-network.service)"
    echo "localdns.state=$(systemctl show -p ActiveState --value unbounded-localdns-network.service)"
    echo "localdns.link=$(ip -d -o link show dev localdns 2>/dev/null | sed -n 's/.*\\ *\(dummy\|bridge\) .*/\1/p' | head -1)"
    echo "localdns.table=$(nft list tables | grep -cx 'table ip unbounded_localdns' || true)"
    for root in /opt/unbounded/agent /usr/local; do
      echo "helper.$root.nspawn=$(present $root/bin/unbounded-agent-nspawn-lifecycle)"
      echo "helper.$root.localdns=$(present $root/libexec/unbounded-localdns-network)"
    done
    echo "links=$(ip -o link show | sed 's/^[0-9]*: \([^:@]*\).*/\1/' | sort | tr '\n' ' ')"
    echo "rules4=$(ip -4 -N rule show | sed -n 's/.* lookup \([0-9]*\).*/\1/p' | sort -nu | tr '\n' ' ')"
    echo "rules6=$(ip -6 -N rule show | sed -n 's/.* lookup \([0-9]*\).*/\1/p' | sort -nu | tr '\n' ' ')"
    echo "routes51820=$(ip -4 route show table 51820 2>/dev/null | wc -l)"
    echo "keys=$(ls /etc/wireguard 2>/dev/null | tr '\n' ' ')"
    echo "cni.rules=$(nft -a list chain inet cni_plugins_masquerade masq_checks 2>/dev/null | grep -o 'net: [a-z]*' | tr '\n' ' ')"
    # The CNI chains in the nat table, and the POSTROUTING rules that jump to them.
    echo "cni.natChains=$(iptables-save -t nat | sed -n 's/^:\(CNI-[^ ]*\) .*/\1/p' | sort | tr '\n' ' ')"
    echo "cni.natJumps=$(iptables-save -t nat | sed -n 's/^-A POSTROUTING .* -j \(CNI-[^ ]*\).*/\1/p' | sort | tr '\n' ' ')"
    echo "hooks.template=$(present /etc/systemd/system/unbounded-agent-regenerate-config@.service)"
    echo "config=$(sha256sum /etc/aks-flex-node/config.json 2>/dev/null | cut -d' ' -f1)"
  `;
  const out = (await runOrThrow(host, ['/bin/bash', '-c', script])).stdout;
  return Object.fromEntries(
    out
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1).trim()]),
  );
}

/**
 * After a reset or uninstall.sh: nothing of the node is left (machines
 * stopped and removed, hooks, LocalDNS, the node's links, policy routes,
 * keys, bridge CNI) and the host's own network state is kept. The detailed
 * rows are in product-node-reset.test.ts; this is the check other scenarios
 * run after their own reset.
 */
export async function expectRealNodeGone(host: Host, node: RealNode): Promise<void> {
  const facts = await readRealNodeFacts(host);
  const links = facts.links?.split(' ') ?? [];
  const left = [
    ...realNodeMachines.flatMap((m) =>
      ['rootfs', 'nspawn', 'override', 'regenerate', 'enabled']
        .filter((k) => facts[`machine.${m}.${k}`] !== 'no')
        .map((k) => `machine.${m}.${k}`),
    ),
    ...realNodeMachines
      .filter((m) => facts[`machine.${m}.state`] === 'active')
      .map((m) => `${m} running`),
    ...['localdns.unit', 'hooks.template'].filter((k) => facts[k] !== 'no'),
    ...(facts['localdns.table'] === '0' ? [] : ['nft table ip unbounded_localdns']),
    ...(node.localDnsDummy && facts['localdns.link'] !== '' ? ['localdns link'] : []),
    ...node.links.map((l) => l.name).filter((name) => links.includes(name)),
    ...['51820', '51821'].filter((t) => facts.rules4?.split(' ').includes(t)),
    ...(facts.rules6?.split(' ').includes('51899') ? ['51899'] : []),
    ...(facts.keys === '' ? [] : [`keys: ${facts.keys}`]),
    ...(facts['cni.rules']?.includes('net: bridge') ? ['bridge CNI rule'] : []),
    ...[facts['cni.natChains'], facts['cni.natJumps']]
      .filter((listed) => listed?.includes(cniNatChains.bridge))
      .map((listed) => `bridge CNI nat chain or jump: ${listed ?? ''}`),
  ];
  expect(left, 'what reset left of the node').toEqual([]);
  expect(links, "the host's own link").toContain(hostOwnNetwork.link);
  expect(facts.rules4?.split(' '), "the host's own table").toContain(String(hostOwnNetwork.table));
  expect(facts['cni.natChains'], "another network's nat chain").toContain(cniNatChains.other);
}

/** The node the harness laid out at the host's first boot; throws on a host booted empty. */
export function realNodeOf(host: Host): RealNode {
  if (host.node === undefined) {
    throw new Error(`${host.name} was booted with node: { empty }; it has no real-shaped node`);
  }
  return host.node;
}
