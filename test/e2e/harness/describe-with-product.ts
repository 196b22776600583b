import { describe } from 'vitest';
import { isProductBuilt, productSkipMessage } from './product.js';

/**
 * `describe` for scenarios that need the built product. Without it the
 * suite is skipped loudly: the reason goes to stderr and into the suite's
 * name, so neither a quiet reporter nor a skim of the summary misses it.
 */
export function describeWithProduct(title: string, suite: () => void): void {
  if (isProductBuilt()) {
    describe(title, suite);
    return;
  }
  process.stderr.write(`${productSkipMessage} (${title})\n`);
  describe.skip(`${title} [${productSkipMessage}]`, suite);
}
