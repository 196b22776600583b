import { describe, expect, it } from 'vitest';
import { describeResetPhase, resetPhases } from './reset-agent.js';

describe("reset's progress as an operator reads it (issue#24.10)", () => {
  it.each(resetPhases)('step %s is a sentence, not its id', (phase) => {
    const sentence = describeResetPhase(phase);
    expect(sentence).not.toBe(phase);
    expect(sentence).not.toContain(phase);
  });

  it('a phase that is no step passes through as it is', () => {
    expect(describeResetPhase('accepted')).toBe('accepted');
  });
});
