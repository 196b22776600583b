import type { AzureAuthSetting } from '@aks-flex-node/azure-credential';
import { AgentError } from '@aks-flex-node/log';
import { parseCommandArgs } from '../../args.js';
import { settingFromKubeloginEnv } from './kubelogin-setting.js';
import { checkPopFlags } from './pop-flags.js';

/** The AKS AAD server application: the audience of a node's API server token, and `--server-id`'s default. */
export const aksServerId = '6dae42f8-4368-4678-94ff-3960e28e3630';

/** What a `token` command line and kubelogin's environment ask for. */
export interface TokenCall {
  readonly setting: AzureAuthSetting;
  /** The API server's Entra application id: the token's audience. */
  readonly serverId: string;
  /** `--client-certificate-file`, which is checked at every call. */
  readonly certificateFile?: string | undefined;
}

/**
 * Reads `token kubelogin|arc ARGS` with kubelogin's environment, as the Go
 * command does. Both of the executable's token bundles read it here, so the
 * cache hit and the full command refuse the same command lines alike.
 * Throws INVALID_ARGUMENT.
 */
export function readTokenCall(args: string[], env: NodeJS.ProcessEnv): TokenCall {
  const [subcommand, ...rest] = args;
  switch (subcommand) {
    case 'kubelogin': {
      const flags = parseCommandArgs('token kubelogin', rest, {
        'server-id': { type: 'string', default: aksServerId },
        'pop-enabled': { type: 'boolean', default: false },
        'pop-claims': { type: 'string' },
        'client-certificate-file': { type: 'string' },
      });
      const serverId = requireServerId(flags['server-id']);
      checkPopFlags(flags['pop-enabled'], flags['pop-claims']);
      const certificateFile = flags['client-certificate-file'];
      return {
        setting: settingFromKubeloginEnv(env, certificateFile),
        serverId,
        certificateFile,
      };
    }
    // `arc-credential` is the Go command's name for it.
    case 'arc':
    case 'arc-credential': {
      const flags = parseCommandArgs('token arc', rest, {
        'server-id': { type: 'string', default: aksServerId },
      });
      return { setting: { kind: 'arc' }, serverId: requireServerId(flags['server-id']) };
    }
    default:
      throw new AgentError(
        'INVALID_ARGUMENT',
        subcommand === undefined
          ? 'token: no subcommand given'
          : `token: unknown subcommand "${subcommand}"`,
        { hint: 'run `aks-flex-node token --help`: the subcommands are kubelogin and arc' },
      );
  }
}

function requireServerId(value: string): string {
  if (value.trim() === '') {
    throw new AgentError('INVALID_ARGUMENT', 'token: server-id is required', {
      hint: `pass --server-id ${aksServerId} (AKS), or leave it out for that default`,
    });
  }
  return value.trim();
}
