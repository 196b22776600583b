import path from 'node:path';
import { errnoCode, isAgentError } from '@aks-flex-node/log';

/**
 * The one step that lets root write `target` again, by the errno of the
 * failed write (a rollback that cannot finish says what repairs it, issue
 * 22): a read-only mount, an immutable file, a full filesystem, a security
 * policy. The daemon retries by itself; once this is done it converges.
 */
export function repairForWrite(target: string, error: unknown): string {
  const dir = path.dirname(target);
  switch (errnoCode(isAgentError(error) ? error.cause : error)) {
    case 'EROFS':
      return `remount the filesystem of ${dir} read-write (\`mount -o remount,rw "$(findmnt -no TARGET -T ${dir})"\`)`;
    case 'EPERM':
      return `remove the immutable or append-only flag: \`chattr -i -a ${target} ${dir}\``;
    case 'ENOSPC':
    case 'EDQUOT':
      return `free space on the filesystem of ${dir} (\`df -h ${dir}\`)`;
    case 'EACCES':
      return `a security policy denies root ${dir}: see \`journalctl -k --grep denied\``;
    default:
      return `make ${dir} writable for root`;
  }
}
