// node:fs's callback calls, made promises here, rather than node:fs/promises:
// loading that module loads 15 more (readline, the REPL's history, file
// watchers), about 7% of a Node.js start. The host root's inspection runs in
// `host-root`, which the Go releases' scripts run often and which must start
// about as fast as Node.js itself (bench/startup.sh); scripts/build.mjs
// checks that its bundle requires no node:fs/promises.
import {
  lstat as lstatCallback,
  readlink as readlinkCallback,
  realpath as realpathCallback,
  stat as statCallback,
} from 'node:fs';
import { promisify } from 'node:util';

/** `lstat(2)` of `path`, as node:fs/promises' lstat answers it. */
export const lstat = promisify(lstatCallback);

/** `stat(2)` of `path`, following links, as node:fs/promises' stat answers it. */
export const stat = promisify(statCallback);

/** The text of the link at `path`, as node:fs/promises' readlink answers it. */
export const readlink = promisify(readlinkCallback);

/** `realpath(3)` of `path`, the native one node:fs/promises' realpath calls too. */
export const realpath = promisify(realpathCallback.native);
