import vm from 'node:vm';
import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { z } from 'zod';
import type { AnswerName, AnswerValidators } from './answer-validation.js';
import { hostRootResponseSchema, migrateResponseSchema } from './host-root.js';
import { regenerateNspawnHooksResponseSchema } from './nspawn.js';
import { problemSchema } from './problem.js';
import { statusResponseSchema } from './status.js';
import { operationEventSchema, operationSchema, recoveryResponseSchema } from './upgrade.js';

/**
 * Every answer's zod schema, by the name a route's `answer` gives it
 * (routes.ts) and its validator has in {@link AnswerValidators}. Each stays
 * defined once, in zod, in this package; the daemon serializes with it.
 */
export const answerSchemas = {
  status: statusResponseSchema,
  hostRoot: hostRootResponseSchema,
  migrate: migrateResponseSchema,
  operation: operationSchema,
  operationEvent: operationEventSchema,
  recovery: recoveryResponseSchema,
  nspawnHooks: regenerateNspawnHooksResponseSchema,
  problem: problemSchema,
} satisfies Record<keyof AnswerValidators, z.ZodType>;

/**
 * The CommonJS source of a module whose exports are a validator for each of
 * {@link answerSchemas} named in `answers` (all of them unless given): each
 * zod schema as JSON Schema, compiled by
 * ajv into plain functions. The client runs them instead of zod, which would
 * cost the start of `status` and the nspawn hook about 15 ms even from a
 * code cache (bench/nspawn-pre-start.sh).
 * scripts/build.mjs calls this to put the code into the bundles; from
 * source, answer-validators.ts evaluates it. Throws when a schema holds what
 * JSON Schema cannot say (a transform, a date), or when the code would need
 * one of ajv's runtime modules: the executable's status bundle has no ajv.
 * Zod refinements do not carry over: the schemas here have none.
 */
export function answerValidatorsSource(
  answers: readonly AnswerName[] = Object.keys(answerSchemas) as AnswerName[],
): string {
  const ajv = new Ajv({
    code: { source: true },
    allErrors: true,
    strict: true,
    // zod counts a string's length in UTF-16 units, as `unicode: false` does;
    // ajv's default counts code points with a runtime helper the bundle lacks.
    // ajv 8 deprecates the option (and logs so): it is still the one that
    // gives zod's semantics, checked by answer-validators.test.ts.
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- see above
    unicode: false,
    logger: false,
  });
  const names: Record<string, string> = {};
  for (const name of answers) {
    ajv.addSchema(z.toJSONSchema(answerSchemas[name], { target: 'draft-7', io: 'output' }), name);
    names[name] = name;
  }
  const source = standaloneCode(ajv, names);
  const required = /\brequire\(([^)]*)\)/.exec(source);
  if (required !== null) {
    throw new Error(
      `the generated answer validators require ${required[1] ?? ''}; ` +
        'change the schema or the ajv options so the code stands alone',
    );
  }
  return source;
}

/** Evaluates the source {@link answerValidatorsSource} returns, as a CommonJS module. */
export function evaluateAnswerValidators(source: string): AnswerValidators {
  const generated = { exports: {} };
  const run = vm.runInThisContext(`(function (module, exports) {${source}\n})`, {
    filename: 'answer-validators.generated.cjs',
  }) as (module: { exports: object }, exports: object) => void;
  run(generated, generated.exports);
  return generated.exports as AnswerValidators;
}
