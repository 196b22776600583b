import path from 'node:path';
import { createApiClient } from '@aks-flex-node/api';
import { retryWhileStarting } from '../retry-while-starting.js';
import { cleanPath } from '@aks-flex-node/fs';
import { hostPaths } from '@aks-flex-node/layout';
import { AgentError } from '@aks-flex-node/log';
import { parseCommandArgs } from '../args.js';
import { printNote } from '../output.js';
import { reportCancelled } from '../progress/cancel-upgrade.js';
import { followUpgrade } from '../progress/follow-upgrade.js';

const usage =
  'aks-flex-node agent-upgrade --url URL [--sha256 HEX] | [--candidate PATH] [--preflight] | --cancel ID [--json] [--timeout SECONDS]';

/** What the flags ask for, each with only the settings that apply to it. */
type UpgradeRequest =
  | { kind: 'url'; url: string; sha256: string | undefined }
  | { kind: 'preflight'; candidate: string }
  | { kind: 'candidate'; candidate: string }
  | { kind: 'cancel'; id: string };

/**
 * `aks-flex-node agent-upgrade`: `--url` asks the daemon to upgrade from a
 * release archive; `--candidate` activates a binary already on the host
 * (handed to the daemon when one answers, otherwise activated here; without
 * either flag the candidate is this executable), and
 * `--preflight` only shows the plan. Exit 0 when the candidate runs; the
 * error's code gives the others (refused, fetch failed, cancelled, timed out,
 * rolled back; docs/cli.md).
 */
export async function runAgentUpgrade(args: string[]): Promise<number> {
  const flags = parseCommandArgs('agent-upgrade', args, {
    url: { type: 'string' },
    sha256: { type: 'string' },
    candidate: { type: 'string' },
    cancel: { type: 'string' },
    preflight: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    timeout: { type: 'string', default: '300' },
  });
  const request = parseUpgradeRequest(flags);
  const timeoutMs = Number(flags.timeout) * 1000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw usageError(`--timeout ${flags.timeout} is not a positive number of seconds`);
  }
  switch (request.kind) {
    case 'url': {
      const client = createApiClient({ socketPath: hostPaths.socket, timeoutMs: 30_000 });
      const source =
        request.sha256 === undefined
          ? { url: request.url }
          : { url: request.url, sha256: request.sha256 };
      // One budget for the whole command: the wait for a starting daemon
      // takes from it, and each reason it waits for is shown as it changes.
      const deadline = Date.now() + timeoutMs;
      const operation = await retryWhileStarting(() => client.beginAgentUpgrade({ source }), {
        timeoutMs,
        onWaiting: (reason) => {
          printNote(
            `waiting up to ${flags.timeout}s for the daemon to take the upgrade: ${reason}`,
          );
        },
      });
      // Ctrl-C asks the daemon to cancel (before the switch), then the result is followed as usual.
      return followUpgrade(client, operation, {
        json: flags.json,
        timeoutMs: Math.max(deadline - Date.now(), 1_000),
      });
    }
    case 'cancel': {
      const client = createApiClient({ socketPath: hostPaths.socket, timeoutMs });
      return reportCancelled(await client.cancelOperation(request.id), flags.json);
    }
    // Loaded only here: direct activation brings the daemon's libraries, and --url does not need them.
    case 'preflight': {
      const { runCandidatePreflight } = await import('../activation/run-candidate-preflight.js');
      return runCandidatePreflight(request.candidate, flags.json);
    }
    case 'candidate': {
      const { runCandidateActivation } = await import('../activation/run-candidate-activation.js');
      return runCandidateActivation(request.candidate, { json: flags.json, timeoutMs });
    }
    default: {
      const unknown: never = request;
      throw new Error(`unknown agent-upgrade request ${JSON.stringify(unknown)}`);
    }
  }
}

/** One source, and only the flags that go with it. Throws INVALID_ARGUMENT (exit 2). */
function parseUpgradeRequest(flags: {
  url?: string | undefined;
  sha256?: string | undefined;
  candidate?: string | undefined;
  cancel?: string | undefined;
  preflight: boolean;
}): UpgradeRequest {
  if (flags.cancel !== undefined) {
    if (
      flags.url !== undefined ||
      flags.candidate !== undefined ||
      flags.sha256 !== undefined ||
      flags.preflight
    ) {
      throw usageError('--cancel ID takes no source: it stops an upgrade that is running');
    }
    return { kind: 'cancel', id: flags.cancel };
  }
  if (flags.url !== undefined && flags.candidate !== undefined) {
    throw usageError('--url and --candidate are mutually exclusive: give one source');
  }
  if (flags.url === undefined) {
    if (flags.sha256 !== undefined) {
      throw usageError('--sha256 checks a --url archive; a --candidate binary takes none');
    }
    // With neither source the candidate is this executable, as in the Go
    // releases (spec daemon 7.4): `agent-upgrade` run from a copied binary activates it.
    const candidate = flags.candidate ?? cleanPath(process.execPath);
    if (!path.isAbsolute(candidate) || cleanPath(candidate) !== candidate) {
      throw usageError(`--candidate ${candidate} is not an absolute, clean path`);
    }
    return flags.preflight ? { kind: 'preflight', candidate } : { kind: 'candidate', candidate };
  }
  if (flags.preflight) throw usageError('--preflight plans a --candidate activation');
  return { kind: 'url', url: flags.url, sha256: flags.sha256 };
}

function usageError(message: string): AgentError {
  return new AgentError('INVALID_ARGUMENT', message, { hint: usage });
}
