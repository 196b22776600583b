import type { NftTable } from '@aks-flex-node/layout';
import { AgentError, messageOf, type Logger } from '@aks-flex-node/log';
import { runCommand, type CommandResult, type CommandRunner } from '@aks-flex-node/systemd';
import type { NetworkEffects, NetworkLink, NftRule } from './network-effects.js';

/** More rules than any node has for one table: a loop that never empties it is a bug, not a host. */
const maxRulesPerTable = 1000;

/** Thrown inside {@link run} when the program is not installed; listings turn it into undefined. */
class ToolMissing extends Error {}

/**
 * The real {@link NetworkEffects}: `ip` and `nft` through the shared runner
 * (execa, no shell). A tool that is not installed makes its listings resolve
 * undefined; any other failure throws HOST_NETWORK_FAILED with the command
 * and what it printed.
 */
export function createIpNetworkEffects(
  log: Logger,
  runner: CommandRunner = runCommand,
): NetworkEffects {
  const run = async (file: string, args: readonly string[]): Promise<CommandResult> => {
    log.debug({ file, args }, 'running a network command');
    try {
      return await runner(file, args, 30_000);
    } catch (error) {
      if (isNotInstalled(error)) throw new ToolMissing(file);
      throw networkError(file, args, messageOf(error), error);
    }
  };
  const mustSucceed = async (file: string, args: readonly string[]): Promise<CommandResult> => {
    const result = await run(file, args);
    if (result.exitCode !== 0) {
      throw networkError(file, args, `exited ${result.exitCode}: ${result.stderr.trim()}`);
    }
    return result;
  };
  const listing = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (error) {
      if (error instanceof ToolMissing) return undefined;
      throw error;
    }
  };
  const linkGone = async (name: string) =>
    (await run('ip', ['link', 'show', 'dev', name])).exitCode !== 0;

  return {
    listLinks: () =>
      listing(async () =>
        parseLinks((await mustSucceed('ip', ['-d', '-o', 'link', 'show'])).stdout),
      ),
    deleteLink: async (name) => {
      const result = await run('ip', ['link', 'delete', 'dev', name]);
      // Only a verified absence excuses a failed deletion.
      if (result.exitCode !== 0 && !(await linkGone(name))) {
        throw networkError('ip', ['link', 'delete', 'dev', name], result.stderr.trim());
      }
    },
    listNftTables: () =>
      listing(async () => parseNftTables((await mustSucceed('nft', ['list', 'tables'])).stdout)),
    deleteNftTable: async (table) => {
      await mustSucceed('nft', ['delete', 'table', table.family, table.name]);
    },
    listNftRules: async (table, chain) => {
      const args = ['-a', 'list', 'chain', table.family, table.name, chain];
      const result = await run('nft', args);
      // nft says "No such file or directory" for a missing table or chain.
      if (result.exitCode !== 0)
        return /No such file or directory/.test(result.stderr) ? [] : failed('nft', args, result);
      return parseNftRules(result.stdout);
    },
    deleteNftRule: async (table, chain, handle) => {
      await mustSucceed('nft', [
        'delete',
        'rule',
        table.family,
        table.name,
        chain,
        'handle',
        handle,
      ]);
    },
    listRoutingTables: (family) =>
      listing(async () => {
        const rules = await mustSucceed('ip', [`-${family}`, '-j', '-N', 'rule', 'show']);
        const routes = await mustSucceed('ip', [
          `-${family}`,
          '-j',
          '-N',
          'route',
          'show',
          'table',
          'all',
        ]);
        return routingTables(rules.stdout, routes.stdout);
      }),
    removeRoutingTable: async (family, table) => {
      for (let i = 0; ; i += 1) {
        // `ip rule del table N` deletes one rule per call and fails once none is left.
        const result = await run('ip', [`-${family}`, 'rule', 'del', 'table', String(table)]);
        if (result.exitCode !== 0) break;
        if (i >= maxRulesPerTable) {
          throw networkError(
            'ip',
            [`-${family}`, 'rule', 'del', 'table', String(table)],
            `still deleting after ${maxRulesPerTable} rules`,
          );
        }
      }
      const flush = [`-${family}`, 'route', 'flush', 'table', String(table)];
      const result = await run('ip', flush);
      // A table a rule named but that never held a route "does not exist": nothing to flush.
      if (result.exitCode !== 0 && !/does not exist/.test(result.stderr))
        failed('ip', flush, result);
    },
    saveIptablesNat: () =>
      listing(async () => (await mustSucceed('iptables-save', ['-t', 'nat'])).stdout),
    removeIptablesNatChains: async (parent, chains) => {
      const wanted = new Set(chains);
      const list = ['--wait', '-t', 'nat', '-L', parent, '--line-numbers', '-n'];
      const jumps = (await mustSucceed('iptables', list)).stdout
        .split('\n')
        .map((line) => line.trim().split(/\s+/))
        .filter((fields) => fields.length >= 2 && wanted.has(fields[1] ?? ''))
        .map((fields) => Number(fields[0]))
        .filter((n) => Number.isInteger(n) && n > 0)
        // Highest first: deleting one renumbers those after it.
        .sort((a, b) => b - a);
      for (const line of jumps) {
        await mustSucceed('iptables', ['--wait', '-t', 'nat', '-D', parent, String(line)]);
      }
      for (const chain of chains) {
        const flush = await run('iptables', ['--wait', '-t', 'nat', '-F', chain]);
        // Checked, not assumed: only a chain that is verifiably gone excuses a failed flush.
        if (flush.exitCode !== 0) {
          const gone =
            (await run('iptables', ['--wait', '-t', 'nat', '-n', '-L', chain])).exitCode !== 0;
          if (gone) continue;
          failed('iptables', ['--wait', '-t', 'nat', '-F', chain], flush);
        }
        await mustSucceed('iptables', ['--wait', '-t', 'nat', '-X', chain]);
      }
    },
  };
}

/**
 * The CNI chains of the legacy bridge network in an `iptables-save -t nat`
 * listing: every `CNI-…` chain a rule commented with that network's name
 * appends to (`-A`) or jumps to (`-j`), sorted, as the Go reset finds them.
 */
export function legacyBridgeIptablesChains(
  save: string,
  markers: readonly string[],
  prefix: string,
): string[] {
  const chains = new Set<string>();
  for (const line of save.split('\n')) {
    if (!markers.some((marker) => line.includes(marker))) continue;
    const fields = line.trim().split(/\s+/);
    fields.forEach((field, i) => {
      const next = fields[i + 1];
      if ((field !== '-A' && field !== '-j') || next === undefined) return;
      const chain = next.replace(/^["']|["']$/g, '');
      if (chain.startsWith(prefix)) chains.add(chain);
    });
  }
  return [...chains].sort();
}

function failed(file: string, args: readonly string[], result: CommandResult): never {
  throw networkError(file, args, `exited ${result.exitCode}: ${result.stderr.trim()}`);
}

function networkError(
  file: string,
  args: readonly string[],
  detail: string,
  cause?: unknown,
): AgentError {
  return new AgentError('HOST_NETWORK_FAILED', `${file} ${args.join(' ')}: ${detail}`, {
    path: file,
    ...(cause === undefined ? {} : { cause }),
    hint: `fix what keeps \`${file} ${args.join(' ')}\` from working, then run \`aks-flex-node reset\` again`,
  });
}

/** Whether the runner failed because the program does not exist (execa's ENOENT). */
export function isNotInstalled(error: unknown): boolean {
  const cause = error instanceof AgentError ? error.cause : error;
  return (
    typeof cause === 'object' && cause !== null && (cause as { code?: unknown }).code === 'ENOENT'
  );
}

/**
 * Links from `ip -d -o link show`, one per line, parts joined by `\`:
 * `N: NAME[@PEER]: <FLAGS> ...`, then `link/<type> ...`, then (for any link
 * that has a kind: dummy, vxlan, bridge, veth, wireguard...) a part opening
 * with the kind. A plain device has no third part and kind `''`.
 */
export function parseLinks(output: string): NetworkLink[] {
  const links: NetworkLink[] = [];
  for (const line of output.split('\n')) {
    const name = /^\d+:\s+([^:@\s]+)(?:@\S+)?:\s/.exec(line)?.[1];
    if (name === undefined) continue;
    const kindPart = line.split('\\')[2]?.trim() ?? '';
    links.push({ name, kind: /^([a-z][a-z0-9_]*)\s/.exec(`${kindPart} `)?.[1] ?? '' });
  }
  return links;
}

/** Tables from `nft list tables`: one `table FAMILY NAME` per line. */
export function parseNftTables(output: string): NftTable[] {
  return output
    .split('\n')
    .map((line) => /^table\s+(\S+)\s+(\S+)\s*$/.exec(line.trim()))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ family: match[1] ?? '', name: match[2] ?? '' }));
}

/** Rules from `nft -a list chain`: every line ending in `# handle N`. */
export function parseNftRules(output: string): NftRule[] {
  return output
    .split('\n')
    .map((line) => /^\s*(.*?)\s*# handle (\d+)\s*$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .filter((match) => !/^(table|chain)\s/.test(match[1] ?? ''))
    .map((match) => ({ handle: match[2] ?? '', text: match[1] ?? '' }));
}

/** The numeric tables named by `ip -j rule show` and `ip -j route show table all` (JSON). */
export function routingTables(rulesJson: string, routesJson: string): number[] {
  const tables = new Set<number>();
  for (const json of [rulesJson, routesJson]) {
    const entries: unknown = json.trim() === '' ? [] : JSON.parse(json);
    if (!Array.isArray(entries)) continue;
    for (const entry of entries as unknown[]) {
      const table =
        typeof entry === 'object' && entry !== null
          ? (entry as { table?: unknown }).table
          : undefined;
      const number = typeof table === 'number' ? table : Number(table);
      if (Number.isInteger(number)) tables.add(number);
    }
  }
  return [...tables].sort((a, b) => a - b);
}
