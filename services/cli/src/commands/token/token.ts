import { validateClientCertificateFile } from '@aks-flex-node/azure-credential';
import { answerExecCredential } from './answer-exec-credential.js';
import { answerFromCache } from './cached-answer.js';
import { readTokenCall } from './token-args.js';

/**
 * `aks-flex-node token kubelogin|arc`: the kubelet's exec credential plugin.
 * The kubeconfig the Go agent writes for the kubelet runs the machine's copy
 * of the agent as `token kubelogin --server-id <id> [--client-certificate-file F]`
 * with kubelogin's environment; the ExecCredential goes to stdout, errors to
 * stderr with a non-zero exit. This is the whole command; the executable
 * runs {@link answerTokenFromCache} first, in a bundle of its own.
 */
export async function runToken(args: string[]): Promise<number> {
  const call = readTokenCall(args, process.env);
  // Checked at every call, as the Go command does: a file that stopped
  // passing fails loudly even while a cached token would still answer.
  if (call.certificateFile !== undefined) await validateClientCertificateFile(call.certificateFile);
  await answerExecCredential({
    setting: call.setting,
    serverId: call.serverId,
    env: process.env,
    write: (text) => process.stdout.write(text),
    warn: (text) => process.stderr.write(`${text}\n`),
  });
  return 0;
}

/**
 * The kubelet's frequent call, answered from the token cache alone: true
 * when the ExecCredential was written, false when {@link runToken} must
 * answer (no token with time left, or a certificate file to check, which
 * needs node:crypto). It loads neither @azure/identity nor node:crypto, which
 * cost the call more than Node.js's own start (bench/token-startup.sh).
 * Refuses a bad command line as runToken does (INVALID_ARGUMENT).
 */
export function answerTokenFromCache(args: string[]): boolean {
  const call = readTokenCall(args, process.env);
  if (call.certificateFile !== undefined) return false;
  return answerFromCache({
    setting: call.setting,
    serverId: call.serverId,
    env: process.env,
    write: (text) => process.stdout.write(text),
  });
}
