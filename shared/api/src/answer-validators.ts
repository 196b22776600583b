import type { AnswerValidators } from './answer-validation.js';
import { answerValidatorsSource, evaluateAnswerValidators } from './answer-validators-source.js';

let generated: AnswerValidators | undefined;

/**
 * The validators of the daemon's answers that the lean clients use. From
 * source (tests) they are generated on first use; scripts/build.mjs puts
 * the code generated at build time in this module's place, so a bundle that
 * checks answers with them loads neither zod nor ajv.
 */
export function answerValidators(): AnswerValidators {
  generated ??= evaluateAnswerValidators(answerValidatorsSource());
  return generated;
}
