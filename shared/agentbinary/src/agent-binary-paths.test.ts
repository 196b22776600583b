import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentBinaryPathsUnder } from './agent-binary-paths.js';
import { candidateSlotFor, isSlot } from './agent-binary-paths.js';

const paths = agentBinaryPathsUnder('/opt/unbounded/agent');
const lookAlike = path.join(paths.slotDir, 'aks-flex-node-blue-old');

describe('candidateSlotFor (spec agentbinary §1.4 item 3)', () => {
  it.each([
    ['agentbinary#126 current blue → green', paths.blue, paths.green],
    ['agentbinary#126 current green → blue', paths.green, paths.blue],
    ['agentbinary#126 current the plain binary (legacy) → blue', paths.binary, paths.blue],
    ['agentbinary#126 current a look-alike of blue → blue', lookAlike, paths.blue],
  ])('%s', (_name, current, expected) => {
    const candidate = candidateSlotFor(paths, current);
    expect(candidate).toBe(expected);
    // The running binary is never the one overwritten.
    expect(candidate).not.toBe(current);
    expect(isSlot(paths, candidate)).toBe(true);
  });
});

describe('isSlot (spec agentbinary §3.5 step 2, §3.8 step 2)', () => {
  it.each([
    ['agentbinary§3.5 the blue slot is a slot', paths.blue, true],
    ['agentbinary§3.5 the green slot is a slot', paths.green, true],
    ['agentbinary#51 a look-alike name (…-blue-old) is not a slot', lookAlike, false],
    ['agentbinary§3.5 the current link is not a slot', paths.current, false],
    ['agentbinary§3.5 last-good is not a slot', paths.lastGood, false],
    ['agentbinary§3.5 the plain binary is not a slot', paths.binary, false],
    [
      'agentbinary§3.5 the blue slot of another root is not a slot',
      '/usr/local/lib/aks-flex-node/aks-flex-node-blue',
      false,
    ],
    ['agentbinary§3.5 no candidate recorded is not a slot', undefined, false],
    ['agentbinary§3.5 an empty candidate is not a slot', '', false],
  ])('%s', (_name, candidate, expected) => {
    expect(isSlot(paths, candidate)).toBe(expected);
  });
});
