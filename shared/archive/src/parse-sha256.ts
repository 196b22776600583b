import { AgentError } from '@aks-flex-node/log';

const digestPattern = /^[0-9a-f]{64}$/i;

/**
 * Normalises an optional SHA-256: trimmed, an optional `sha256:` prefix
 * dropped, lowercase. Blank means "no digest given" (spec agentbinary §3.3);
 * anything else must be exactly 64 hex characters.
 * Throws INVALID_ARGUMENT.
 */
export function parseSha256(value: string | undefined): string | undefined {
  const trimmed = value?.trim() ?? '';
  if (trimmed === '') return undefined;
  const hex = trimmed.startsWith('sha256:') ? trimmed.slice('sha256:'.length) : trimmed;
  if (!digestPattern.test(hex)) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `the archive digest ${JSON.stringify(trimmed.slice(0, 80))} is not 64 hexadecimal characters`,
      {
        path: 'sha256',
        hint: 'pass the SHA-256 of the release archive, as in its .sha256 file, or omit it',
      },
    );
  }
  return hex.toLowerCase();
}
