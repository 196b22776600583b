/**
 * The network state the Go agent library and unbounded-net leave on a node,
 * by the names they give it. This product creates none of it; reset removes
 * it (spec daemon 8.1, "LocalDNS" and "network"), so the names must stay
 * exactly those the Go releases use, or a reset would leave their state behind.
 */

/** An nftables table: its family and name. */
export interface NftTable {
  readonly family: string;
  readonly name: string;
}

/**
 * The machines' LocalDNS: a dummy interface carrying the listener addresses,
 * and a raw-priority nft table that skips conntrack for DNS to them. Only a
 * dummy is ever removed under this name: another kind of link called
 * `localdns` is not the library's, and reset leaves it.
 */
export const localDns = {
  interfaceName: 'localdns',
  interfaceKind: 'dummy',
  nftTable: { family: 'ip', name: 'unbounded_localdns' } satisfies NftTable,
} as const;

/**
 * unbounded-net's WireGuard gateways: interface `wg<N>` routes through
 * policy-routing table `<N>`, N in this range.
 */
export const wireguardRange = { first: 51820, last: 51899 } as const;

/** Whether a link name is one of unbounded-net's WireGuard interfaces (`wg51820`–`wg51899`). */
export function isWireguardInterface(name: string): boolean {
  const match = /^wg(\d+)$/.exec(name);
  if (match?.[1] === undefined) return false;
  const port = Number(match[1]);
  return port >= wireguardRange.first && port <= wireguardRange.last;
}

/** The tunnel and overlay interfaces unbounded-net creates, removed by name whatever their kind. */
export const overlayInterfaces: readonly string[] = [
  'geneve0',
  'vxlan0',
  'ipip0',
  'unbounded0',
  'cbr0',
];

/** The WireGuard key files under the WireGuard directory. */
export const wireguardKeyFiles: readonly string[] = ['server.priv', 'server.pub'];

/**
 * What the retired `99-bridge.conf` CNI network (named `bridge`) left: its
 * bridge, and masquerade rules in the CNI plugins' nft table whose comment
 * names the network. Only those rules go: the table and chain are shared with
 * any other CNI network on the host.
 */
export const legacyBridgeCni = {
  bridge: 'cni0',
  nftTable: { family: 'inet', name: 'cni_plugins_masquerade' } satisfies NftTable,
  nftChain: 'masq_checks',
  ruleMarker: 'net: bridge,',
  /**
   * The iptables (nat) side, as the CNI plugins left it on hosts without nft
   * masquerading: chains `CNI-…` that a rule commented with the network's
   * name jumps to or fills, and their jumps from POSTROUTING.
   */
  iptablesChainPrefix: 'CNI-',
  iptablesRuleMarkers: ['name: \\"bridge\\"', 'name: "bridge"'],
  iptablesParentChain: 'POSTROUTING',
} as const;
