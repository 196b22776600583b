import type { NftTable } from '@aks-flex-node/layout';

/** One link of the network namespace: its name and the kind `ip -d` reports (`''` for a plain device). */
export interface NetworkLink {
  readonly name: string;
  readonly kind: string;
}

/** One rule of an nft chain: its handle and its text as `nft -a list chain` prints it. */
export interface NftRule {
  readonly handle: string;
  readonly text: string;
}

/** An address family of the policy routing: `ip -4` or `ip -6`. */
export type IpFamily = 4 | 6;

/**
 * What reset asks of the node's network, behind one small object (as
 * {@link ResetEffects} is for systemd) so unit tests pass a fake that records
 * the order of the calls. The real one runs `ip` and `nft`. A listing
 * resolves undefined when its tool is not installed: reset then warns, skips
 * what that tool would show, and reports it. Every other failure throws
 * HOST_NETWORK_FAILED naming the command.
 */
export interface NetworkEffects {
  /** Every link, with its kind (`ip -d -o link show`); undefined without `ip`. */
  listLinks(): Promise<NetworkLink[] | undefined>;
  /** `ip link delete NAME`; a link already gone counts as deleted. */
  deleteLink(name: string): Promise<void>;
  /** Every nft table (`nft list tables`); undefined without `nft`. */
  listNftTables(): Promise<NftTable[] | undefined>;
  /** `nft delete table FAMILY NAME`. */
  deleteNftTable(table: NftTable): Promise<void>;
  /** The rules of a chain with their handles; empty when the chain is not there. */
  listNftRules(table: NftTable, chain: string): Promise<NftRule[]>;
  /** `nft delete rule FAMILY TABLE CHAIN handle HANDLE`. */
  deleteNftRule(table: NftTable, chain: string, handle: string): Promise<void>;
  /**
   * The routing tables of a family that policy rules point to or that hold
   * routes (`ip -j rule show`, `ip -j route show table all`); undefined without `ip`.
   */
  listRoutingTables(family: IpFamily): Promise<number[] | undefined>;
  /** Deletes every policy rule pointing to the table, then flushes its routes. */
  removeRoutingTable(family: IpFamily, table: number): Promise<void>;
  /** The nat table as `iptables-save -t nat` prints it; undefined without iptables. */
  saveIptablesNat(): Promise<string | undefined>;
  /**
   * Deletes, in the nat table, every rule of `parent` that jumps to one of
   * `chains`, then flushes and deletes each chain. A chain already gone counts
   * as deleted.
   */
  removeIptablesNatChains(parent: string, chains: readonly string[]): Promise<void>;
}
