import path from 'node:path';
import vm from 'node:vm';

/** What {@link evaluateCommonJs} needs besides the source. */
export interface EvaluateCommonJsOptions {
  /** The name stack traces show for the code. */
  filename: string;
  /** The `require` the code sees: the executable's own, which loads Node's built-in modules. */
  require: (id: string) => unknown;
  /** V8's code cache for this source from {@link compileCommonJs}; a stale one is ignored. */
  codeCache?: Buffer | undefined;
}

type ModuleWrapper = (
  exports: unknown,
  require: EvaluateCommonJsOptions['require'],
  module: { exports: unknown },
  filename: string,
  dirname: string,
) => void;

/**
 * Compiles a CommonJS bundle's text inside Node's module wrapper. The build
 * calls it too, to make the code cache, so both wrap the text alike: V8
 * takes a cache only for the very source it was made from.
 */
export function compileCommonJs(
  source: string,
  options: { filename: string; codeCache?: Buffer | undefined },
): vm.Script {
  return new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${source}\n})`,
    {
      filename: options.filename,
      ...(options.codeCache === undefined ? {} : { cachedData: options.codeCache }),
      // A bundle keeps `import()` only for Node's built-in modules; they load as in the main script.
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    },
  );
}

/**
 * Runs a compiled CommonJS bundle as Node runs a module and returns its
 * `module.exports`. `__filename` is the executable, as it is for the
 * executable's main script, so every bundle sees the same values.
 */
export function runCommonJs(
  script: vm.Script,
  require: EvaluateCommonJsOptions['require'],
): unknown {
  const wrapper = script.runInThisContext() as ModuleWrapper;
  const module = { exports: {} as unknown };
  wrapper.call(
    module.exports,
    module.exports,
    require,
    module,
    process.execPath,
    path.dirname(process.execPath),
  );
  return module.exports;
}

/** Compiles and runs a CommonJS bundle's text; see {@link compileCommonJs} and {@link runCommonJs}. */
export function evaluateCommonJs(source: string, options: EvaluateCommonJsOptions): unknown {
  return runCommonJs(compileCommonJs(source, options), options.require);
}
