import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from './sha256.js';

const nodeSha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('sha256Hex, the token cache key without node:crypto', () => {
  it.each([
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    [
      'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    ],
  ])('issue23 the FIPS 180-4 example %j', (text, digest) => {
    expect(sha256Hex(text)).toBe(digest);
  });

  it('issue23 equals node:crypto at every length around the block and padding edges, and for UTF-8', () => {
    for (let length = 0; length <= 200; length++) {
      const text = randomBytes(length).toString('latin1');
      expect(sha256Hex(text), `length ${length}`).toBe(nodeSha256(text));
    }
    const unicode = 'sécret-é-😀-'.repeat(20);
    expect(sha256Hex(unicode)).toBe(nodeSha256(unicode));
  });
});
