import { describe, expect, it } from 'vitest';
import { assetBytes, assetText } from './sea-asset.js';

function rawAsset(text: string): ArrayBuffer {
  const bytes = new TextEncoder().encode(text);
  const raw = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(raw).set(bytes);
  return raw;
}

describe('assetBytes', () => {
  it('shares the raw asset memory instead of copying it', () => {
    const raw = rawAsset('code cache');
    const bytes = assetBytes(raw);
    expect(bytes.buffer).toBe(raw);
    expect(bytes.byteLength).toBe(raw.byteLength);
    // A write through the raw asset shows in the view: one copy of the bytes.
    new Uint8Array(raw)[0] = 'C'.charCodeAt(0);
    expect(bytes.toString('latin1')).toBe('Code cache');
  });
});

describe('assetText', () => {
  it('decodes the asset as UTF-8', () => {
    expect(assetText(rawAsset('exports.x = "\\u2014";\n'))).toBe('exports.x = "\\u2014";\n');
    expect(assetText(rawAsset('// caf\u00e9'))).toBe('// caf\u00e9');
  });

  it('leaves the raw asset as it was', () => {
    const raw = rawAsset('module.exports = 1;');
    assetText(raw);
    expect(Buffer.from(raw).toString('utf8')).toBe('module.exports = 1;');
  });
});
