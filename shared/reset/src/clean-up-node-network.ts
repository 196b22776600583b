import {
  isWireguardInterface,
  legacyBridgeCni,
  localDns,
  overlayInterfaces,
  wireguardRange,
  type NftTable,
} from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import { legacyBridgeIptablesChains } from './ip-network-effects.js';
import type { IpFamily, NetworkEffects, NetworkLink } from './network-effects.js';

/** What the network clean-up removed, and what it found but left, each with why. */
export interface NodeNetworkCleanup {
  removed: string[];
  left: string[];
}

/**
 * Removes the network state the Go agent library and unbounded-net leave on
 * a node (spec daemon 8.1: the library's CleanupNetwork, RemoveNetworkInterfaces,
 * CleanupRoutes and the legacy bridge CNI clean-up), in this order:
 *
 * 1. LocalDNS: its nft table, then its dummy interface. A link named like it
 *    that is not a dummy is not the library's: it is left, with a warning.
 * 2. WireGuard interfaces `wg51820`–`wg51899` and the overlay interfaces, by name.
 * 3. Policy routing: every rule pointing to a table in the WireGuard range,
 *    then that table's routes, for IPv4 and IPv6.
 * 4. The legacy bridge CNI: its bridge `cni0`, its rules in the CNI
 *    plugins' nft chain, and its iptables nat chains (`CNI-…` named by its
 *    commented rules) with their jumps from POSTROUTING. The nft table and
 *    the nat table are shared, so only the bridge network's rules go.
 *
 * Run only once the machines are stopped: a running machine's network agent
 * would create the interfaces and rules again. Each step lists before it
 * deletes, so a second run finds nothing and changes nothing. A tool that is
 * not installed is reported in `left` and its part skipped. Throws
 * HOST_NETWORK_FAILED when a command fails; a second reset resumes.
 */
export async function cleanUpNodeNetwork(
  network: NetworkEffects,
  log: Logger,
): Promise<NodeNetworkCleanup> {
  const done: NodeNetworkCleanup = { removed: [], left: [] };
  const leave = (what: string, why: string) => {
    log.warn({ what, why }, 'reset left part of the node network as it is');
    done.left.push(`${what}: ${why}`);
  };
  const tables = await network.listNftTables();
  if (tables === undefined) {
    leave(
      'nft tables',
      'nft is not installed, so the LocalDNS table and the bridge CNI rules were not checked',
    );
  } else if (hasTable(tables, localDns.nftTable)) {
    await network.deleteNftTable(localDns.nftTable);
    done.removed.push(`nft table ${describeTable(localDns.nftTable)}`);
  }

  const links = await network.listLinks();
  if (links === undefined) {
    leave('network interfaces and policy routes', 'ip is not installed, so none was checked');
    return done;
  }
  for (const link of linksToRemove(links, leave)) {
    await network.deleteLink(link.name);
    done.removed.push(`link ${link.name}`);
  }

  for (const family of [4, 6] as const) {
    const inUse = (await network.listRoutingTables(family)) ?? [];
    for (const table of inUse.filter(isWireguardTable)) {
      await network.removeRoutingTable(family, table);
      done.removed.push(`routing table ${table} (${familyName(family)})`);
    }
  }

  if (tables !== undefined && hasTable(tables, legacyBridgeCni.nftTable)) {
    const rules = await network.listNftRules(legacyBridgeCni.nftTable, legacyBridgeCni.nftChain);
    for (const rule of rules.filter((r) => r.text.includes(legacyBridgeCni.ruleMarker))) {
      await network.deleteNftRule(legacyBridgeCni.nftTable, legacyBridgeCni.nftChain, rule.handle);
      done.removed.push(
        `nft rule ${describeTable(legacyBridgeCni.nftTable)} ${legacyBridgeCni.nftChain} handle ${rule.handle}`,
      );
    }
  }

  // The same network's iptables side, where its plugins masqueraded with
  // iptables: only the chains its own commented rules name, and their jumps.
  const nat = await network.saveIptablesNat();
  if (nat === undefined) {
    leave(
      'iptables nat chains',
      'iptables is not installed, so the bridge CNI chains were not checked',
    );
  } else {
    const chains = legacyBridgeIptablesChains(
      nat,
      legacyBridgeCni.iptablesRuleMarkers,
      legacyBridgeCni.iptablesChainPrefix,
    );
    if (chains.length > 0) {
      await network.removeIptablesNatChains(legacyBridgeCni.iptablesParentChain, chains);
      done.removed.push(...chains.map((chain) => `iptables nat chain ${chain}`));
    }
  }
  return done;
}

/**
 * The links reset removes, in order: the LocalDNS dummy, the WireGuard
 * interfaces, the overlay interfaces, the legacy CNI bridge. The LocalDNS
 * name on any other kind of link is refused through `leave`.
 */
export function linksToRemove(
  links: readonly NetworkLink[],
  leave: (what: string, why: string) => void,
): NetworkLink[] {
  const byName = new Map(links.map((link) => [link.name, link]));
  const chosen: NetworkLink[] = [];
  const localDnsLink = byName.get(localDns.interfaceName);
  if (localDnsLink !== undefined) {
    if (localDnsLink.kind === localDns.interfaceKind) chosen.push(localDnsLink);
    else {
      leave(
        `link ${localDns.interfaceName}`,
        `it is ${localDnsLink.kind === '' ? 'a plain device' : `a ${localDnsLink.kind} link`}, not the dummy LocalDNS creates, so it is not the agent's`,
      );
    }
  }
  chosen.push(...links.filter((link) => isWireguardInterface(link.name)));
  for (const name of [...overlayInterfaces, legacyBridgeCni.bridge]) {
    const link = byName.get(name);
    if (link !== undefined) chosen.push(link);
  }
  return chosen;
}

function isWireguardTable(table: number): boolean {
  return table >= wireguardRange.first && table <= wireguardRange.last;
}

function hasTable(tables: readonly NftTable[], wanted: NftTable): boolean {
  return tables.some((t) => t.family === wanted.family && t.name === wanted.name);
}

function describeTable(table: NftTable): string {
  return `${table.family} ${table.name}`;
}

function familyName(family: IpFamily): string {
  return family === 4 ? 'IPv4' : 'IPv6';
}
