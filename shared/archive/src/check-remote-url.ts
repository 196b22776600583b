/**
 * Why a URL may not be fetched, or `undefined` when it may. Applied to the
 * source and to every redirect target alike (spec agentbinary §3.3): only
 * http and https, a host, no user-info (credentials would be sent in clear
 * and logged), no fragment (it never reaches the server, so it is a mistake
 * or a smuggled secret). An https→http redirect passes, as upstream pins.
 */
export function explainUnfetchableUrl(url: URL): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `unsupported agent download URL scheme ${url.protocol.slice(0, -1)}`;
  }
  if (url.hostname === '') return 'the URL has no host';
  if (url.username !== '' || url.password !== '') return 'the URL carries user-info';
  if (url.hash !== '') return 'the URL has a fragment';
  return undefined;
}
