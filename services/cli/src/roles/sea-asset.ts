/**
 * Views over an asset of the executable as `node:sea`'s `getRawAsset` returns
 * it: memory mapped from the executable itself, which `getAsset` would copy
 * first. The daemon's bundle is megabytes, and a copy is anonymous memory
 * the daemon keeps until a garbage collection that may come late (an idle
 * daemon hardly allocates). The views are read-only by contract: writing
 * to the executable's mapping crashes the process.
 */

/**
 * The asset's text. A bundle holds ASCII only (scripts/build.mjs checks it),
 * so V8 keeps the string one byte a character; one non-ASCII character would
 * double the memory of the whole source, which V8 keeps to compile lazily.
 */
export function assetText(raw: ArrayBuffer): string {
  return Buffer.from(raw).toString('utf8');
}

/** The asset's bytes as a Buffer sharing its memory, for V8's `cachedData`. */
export function assetBytes(raw: ArrayBuffer): Buffer {
  return Buffer.from(raw);
}
