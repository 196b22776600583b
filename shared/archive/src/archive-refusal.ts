import { AgentError } from '@aks-flex-node/log';

const defaultHint =
  'check that the source is an aks-flex-node release archive and its digest is right, then retry the upgrade';

/**
 * The UPGRADE_REFUSED error for a source or archive that was refused before
 * anything switched. `subject` is the redacted URL or the archive's path.
 */
export function refuseArchive(message: string, subject: string, hint = defaultHint): AgentError {
  return new AgentError('UPGRADE_REFUSED', message, { path: subject, hint });
}
