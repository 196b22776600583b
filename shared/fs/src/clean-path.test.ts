import { describe, expect, it } from 'vitest';
import { cleanPath } from './clean-path.js';

describe('cleanPath', () => {
  // Rows from Go's path.Clean documentation and tests.
  it.each([
    ['', '.'],
    ['/', '/'],
    ['abc', 'abc'],
    ['abc/', 'abc'],
    ['/abc/', '/abc'],
    ['abc//def', 'abc/def'],
    ['//abc', '/abc'],
    ['./abc', 'abc'],
    ['abc/./def', 'abc/def'],
    ['abc/def/..', 'abc'],
    ['abc/def/../..', '.'],
    ['abc/def/../../..', '..'],
    ['/abc/def/../../..', '/'],
    ['abc/def/../../../ghi', '../ghi'],
    ['/../abc', '/abc'],
    ['link/./x/', 'link/x'],
    ['../../x', '../../x'],
  ])('cleans %j to %j', (input, expected) => {
    expect(cleanPath(input)).toBe(expected);
  });
});
