import { validateClientCertificateFile } from '@aks-flex-node/azure-credential';
import { AgentError } from '@aks-flex-node/log';
import { parseCommandArgs } from '../../args.js';
import { answerExecCredential } from './answer-exec-credential.js';
import { settingFromKubeloginEnv } from './kubelogin-setting.js';
import { checkPopFlags } from './pop-flags.js';

/** The AKS AAD server application: the audience of a node's API server token, and `--server-id`'s default. */
export const aksServerId = '6dae42f8-4368-4678-94ff-3960e28e3630';

/**
 * `aks-flex-node token kubelogin|arc`: the kubelet's exec credential plugin.
 * The kubeconfig the Go agent writes for the kubelet runs the machine's copy
 * of the agent as `token kubelogin --server-id <id> [--client-certificate-file F]`
 * with kubelogin's environment; the ExecCredential goes to stdout, errors to
 * stderr with a non-zero exit.
 */
export async function runToken(args: string[]): Promise<number> {
  const [subcommand, ...rest] = args;
  switch (subcommand) {
    case 'kubelogin':
      await runKubelogin(rest);
      return 0;
    // `arc-credential` is the Go command's name for it.
    case 'arc':
    case 'arc-credential':
      await runArc(rest);
      return 0;
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

async function runKubelogin(args: string[]): Promise<void> {
  const flags = parseCommandArgs('token kubelogin', args, {
    'server-id': { type: 'string', default: aksServerId },
    'pop-enabled': { type: 'boolean', default: false },
    'pop-claims': { type: 'string' },
    'client-certificate-file': { type: 'string' },
  });
  const serverId = requireServerId(flags['server-id']);
  checkPopFlags(flags['pop-enabled'], flags['pop-claims']);
  const certificateFile = flags['client-certificate-file'];
  // Checked at every call, as the Go command does: a file that stopped
  // passing fails loudly even while a cached token would still answer.
  if (certificateFile !== undefined) await validateClientCertificateFile(certificateFile);
  await answerExecCredential({
    setting: settingFromKubeloginEnv(process.env, certificateFile),
    serverId,
    env: process.env,
    write: (text) => process.stdout.write(text),
    warn: (text) => process.stderr.write(`${text}\n`),
  });
}

async function runArc(args: string[]): Promise<void> {
  const flags = parseCommandArgs('token arc', args, {
    'server-id': { type: 'string', default: aksServerId },
  });
  await answerExecCredential({
    setting: { kind: 'arc' },
    serverId: requireServerId(flags['server-id']),
    env: process.env,
    write: (text) => process.stdout.write(text),
    warn: (text) => process.stderr.write(`${text}\n`),
  });
}

function requireServerId(value: string): string {
  if (value.trim() === '') {
    throw new AgentError('INVALID_ARGUMENT', 'token: server-id is required', {
      hint: `pass --server-id ${aksServerId} (AKS), or leave it out for that default`,
    });
  }
  return value.trim();
}
