import vm from 'node:vm';
import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { z } from 'zod';
import type { AnswerValidators } from './answer-validation.js';
import { problemSchema } from './problem.js';
import { statusResponseSchema } from './status.js';

/**
 * The schemas whose validators are generated, by the name each has in
 * {@link AnswerValidators}. Each stays defined once, in zod, in this package.
 */
export const generatedAnswerSchemas = {
  status: statusResponseSchema,
  problem: problemSchema,
} satisfies Record<keyof AnswerValidators, z.ZodType>;

/**
 * The CommonJS source of a module whose exports are a validator for each of
 * {@link generatedAnswerSchemas}: each zod schema as JSON Schema, compiled by
 * ajv into plain functions. `status` runs it instead of zod, which costs its
 * start about 15 ms even from a code cache (bench/nspawn-pre-start.sh).
 * scripts/build.mjs calls this to put the code into the bundles; from
 * source, answer-validators.ts evaluates it. Throws when a schema holds what
 * JSON Schema cannot say (a transform, a date), or when the code would need
 * one of ajv's runtime modules: the executable's status bundle has no ajv.
 * Zod refinements do not carry over: the schemas here have none.
 */
export function answerValidatorsSource(): string {
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
  for (const [name, schema] of Object.entries(generatedAnswerSchemas)) {
    ajv.addSchema(z.toJSONSchema(schema, { target: 'draft-7', io: 'output' }), name);
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
