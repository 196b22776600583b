import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileCommonJs, evaluateCommonJs, runCommonJs } from './evaluate-common-js.js';

const require = createRequire(import.meta.url);
const bundle = `
const path = require('node:path');
exports.sep = path.sep;
module.exports.file = __filename;
module.exports.dir = __dirname;
module.exports.self = this === exports;
`;

describe('evaluateCommonJs', () => {
  it('runs a bundle as a CommonJS module and returns its exports', () => {
    const exported = evaluateCommonJs(bundle, { filename: 'test.cjs', require }) as {
      sep: string;
      file: string;
      dir: string;
      self: boolean;
    };
    expect(exported.sep).toBe('/');
    // As for the executable's main script: __filename is the executable.
    expect(exported.file).toBe(process.execPath);
    expect(exported.dir).toBe(path.dirname(process.execPath));
    expect(exported.self).toBe(true);
  });

  it('takes the code cache made from the same source, after running it', () => {
    const made = compileCommonJs(bundle, { filename: 'test.cjs' });
    runCommonJs(made, require);
    const cached = compileCommonJs(bundle, {
      filename: 'test.cjs',
      codeCache: made.createCachedData(),
    });
    expect(cached.cachedDataRejected).toBe(false);
  });

  it('ignores a code cache made from another source', () => {
    const other = compileCommonJs('exports.x = 1;', { filename: 'other.cjs' }).createCachedData();
    // A source this process has not compiled yet, so V8 consults the cache it is given.
    const fresh = `${bundle}\nexports.fresh = true;`;
    const script = compileCommonJs(fresh, { filename: 'test.cjs', codeCache: other });
    expect(script.cachedDataRejected).toBe(true);
    expect((runCommonJs(script, require) as { sep: string }).sep).toBe('/');
  });

  it('passes an error thrown by the bundle to the caller', () => {
    expect(() =>
      evaluateCommonJs('throw new Error("broken bundle")', { filename: 'test.cjs', require }),
    ).toThrow('broken bundle');
  });
});
