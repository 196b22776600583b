import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { explainUnfetchableUrl } from './check-remote-url.js';
import { redactUrl, redactUrlsInText } from './redact-url.js';
import { parseArchiveSource } from './archive-source.js';

const digest = '0123456789abcdef'.repeat(4);
const secret = 'SECRET-TOKEN';

describe('parseArchiveSource', () => {
  it('agentbinary#2 an https URL and a 64-hex digest are accepted', () => {
    const source = parseArchiveSource({
      url: `https://example.test/r/a.tar.gz?sig=${secret}`,
      sha256: digest,
    });
    expect(source.url.href).toBe(`https://example.test/r/a.tar.gz?sig=${secret}`);
    expect(source.sha256).toBe(digest);
    expect(source.redactedUrl).toBe('https://example.test/r/a.tar.gz');
  });

  it('agentbinary#4 a plain http URL is accepted', () => {
    expect(parseArchiveSource({ url: 'http://10.0.0.1:8080/a.tar.gz' }).url.protocol).toBe('http:');
  });

  it.each([
    ['agentbinary#5 an omitted digest', undefined],
    ['a blank digest', '   '],
  ])('%s is accepted and stays absent', (_name, sha256) => {
    const source = parseArchiveSource({ url: 'https://example.test/a.tar.gz', sha256 });
    expect('sha256' in source).toBe(false);
  });

  it('a digest is trimmed, loses its sha256: prefix and is lowercased', () => {
    const source = parseArchiveSource({
      url: 'https://example.test/a',
      sha256: `  sha256:${digest.toUpperCase()}\n`,
    });
    expect(source.sha256).toBe(digest);
  });

  it('the URL is trimmed', () => {
    expect(parseArchiveSource({ url: '  https://example.test/a  ' }).url.href).toBe(
      'https://example.test/a',
    );
  });

  it('a file URL names a local archive (this port accepts it for offline hosts; upstream #111 refused it)', () => {
    const source = parseArchiveSource({
      url: 'file:///var/tmp/1.2.3/aks-flex-node-linux-amd64.tar.gz',
    });
    expect(source.url.protocol).toBe('file:');
    expect(source.redactedUrl).toBe('file:///var/tmp/1.2.3/aks-flex-node-linux-amd64.tar.gz');
  });

  it.each([
    ['agentbinary#6 a digest "bad"', { sha256: 'bad' }, '64 hexadecimal'],
    ['a digest of 63 characters', { sha256: digest.slice(1) }, '64 hexadecimal'],
    ['a digest with a non-hex character', { sha256: `${digest.slice(1)}g` }, '64 hexadecimal'],
    ['a bare sha256: prefix', { sha256: 'sha256:' }, '64 hexadecimal'],
    ['agentbinary#3 an empty URL', { url: '' }, 'the download URL is empty'],
    [
      'agentbinary#25 an ftp URL',
      { url: 'ftp://example.test/a.tar.gz' },
      'unsupported agent download URL scheme ftp',
    ],
    ['a URL without a host', { url: 'https://' }, 'is not an absolute URL'],
    ['a relative URL', { url: '/a.tar.gz' }, 'is not an absolute URL'],
    ['a URL with user-info', { url: `https://user:${secret}@example.test/a` }, 'carries user-info'],
    [
      'a URL with a fragment',
      { url: `https://example.test/a?sig=${secret}#${secret}` },
      'has a fragment',
    ],
    [
      'a URL with a newline inside',
      { url: `https://exa\nmple.test/a?sig=${secret}` },
      'space or control character',
    ],
    ['a file URL with a host', { url: 'file://server/share/a.tar.gz' }, 'must name a local path'],
    [
      'a file URL with a query',
      { url: `file:///a.tar.gz?sig=${secret}` },
      'takes no query or fragment',
    ],
    ['a file URL naming a directory', { url: 'file:///var/tmp/' }, 'not a directory'],
    [
      'a file URL with an encoded slash',
      { url: 'file:///var/tmp%2Fa.tar.gz' },
      'not a usable path',
    ],
  ])('%s is refused with "%s"', (_name, override, words) => {
    const input = { url: 'https://example.test/a.tar.gz', ...override };
    let caught: unknown;
    try {
      parseArchiveSource(input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining(words) as unknown,
    });
    // Refused input never echoes what may be a credential.
    expect(inspect(caught)).not.toContain(secret);
  });
});

describe('redactUrl', () => {
  it.each([
    [
      'agentbinary#125 a query is stripped',
      `https://h.test/a.tar.gz?sv=1&sig=${secret}`,
      'https://h.test/a.tar.gz',
    ],
    ['a fragment is stripped', `https://h.test/a#${secret}`, 'https://h.test/a'],
    ['user-info is stripped', `https://u:${secret}@h.test/a`, 'https://h.test/a'],
    [
      'the port and path are kept',
      'http://h.test:8080/x/y.tar.gz',
      'http://h.test:8080/x/y.tar.gz',
    ],
    ['text that is not a URL is cut at its query', `not a url?sig=${secret}`, 'not a url'],
    ['agentbinary#125 nothing gives the empty string', undefined, ''],
  ])('%s', (_name, input, expected) => {
    expect(redactUrl(input)).toBe(expected);
  });

  it('takes a URL object and leaves it unchanged', () => {
    const url = new URL(`https://h.test/a?sig=${secret}`);
    expect(redactUrl(url)).toBe('https://h.test/a');
    expect(url.search).toBe(`?sig=${secret}`);
  });

  it('redacts every URL inside a message it did not write', () => {
    const text = `request to https://u:p@h.test/a?sig=${secret} failed (see http://x.test/b#${secret})`;
    expect(redactUrlsInText(text)).toBe('request to https://h.test/a failed (see http://x.test/b)');
  });
});

describe('explainUnfetchableUrl', () => {
  it('agentbinary#124 allows an https to http redirect target', () => {
    expect(explainUnfetchableUrl(new URL('http://mirror.test/a.tar.gz?sig=x'))).toBeUndefined();
  });
});
