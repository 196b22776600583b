import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type ChildLoggerFactory = NonNullable<FastifyServerOptions['childLoggerFactory']>;

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;

/**
 * `request.log` that makes its pino child (bound to the request id) only
 * when the request first logs. Fastify makes one child per request, and a
 * status poll never logs, so the child was pure cost: a copy of the logger
 * and its bindings serialized for every request. A request that logs writes
 * exactly the line the eager child would, `reqId` included.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildOptions;
  #made: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get #logger(): FastifyBaseLogger {
    this.#made ??= this.#parent.child(this.#bindings, this.#options);
    return this.#made;
  }

  get level(): string {
    return this.#made?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#logger.level = level;
  }

  // Methods on the prototype, not arrow fields: a request would pay a closure for each.
  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(): void {
    // Pino's silent level method: writes nothing.
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.#logger.child(bindings, options);
  }

  #log(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    this.#logger[level](...(args as Parameters<FastifyBaseLogger['info']>));
  }
}

/** Fastify's `childLoggerFactory` for {@link LazyRequestLogger}. */
export const lazyRequestLoggerFactory: ChildLoggerFactory = (logger, bindings, options) =>
  new LazyRequestLogger(logger, bindings, options);
