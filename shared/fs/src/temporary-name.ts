import { randomBytes } from 'node:crypto';
import path from 'node:path';

/**
 * The one pattern of the temporary names this package writes: a leading dot
 * (out of globbing), the target's own name, 12 random hex digits, `.tmp`.
 * A crash between creating one and renaming it over its target leaves it
 * behind, and the daemon's start sweep and the move's pass 2 find it by this
 * pattern and the target's name alone (see removeTemporaryFiles).
 */
const temporaryNamePattern = /^\.(.+)\.[0-9a-f]{12}\.tmp$/;

/**
 * A fresh temporary path for `target`, in the same directory: the rename over
 * the target is then atomic, and the file gets the label the directory gives
 * (SELinux). Used by writeThroughTemp and replaceSymlinkAtomic.
 */
export function temporaryPathFor(target: string): string {
  const name = `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`;
  return path.join(path.dirname(target), name);
}

/** The name of the target `name` is a temporary for, or undefined when it is not one of this package's. */
export function targetOfTemporary(name: string): string | undefined {
  return temporaryNamePattern.exec(name)?.[1];
}
