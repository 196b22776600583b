import net from 'node:net';

/** One request to the daemon over its Unix socket. */
export interface UnixHttpRequest {
  socketPath: string;
  method: string;
  path: string;
  /** A JSON body; none for a GET. */
  body?: string;
  /** How long the socket may stay silent before the request is given up. */
  timeoutMs: number;
}

/** The daemon's answer: the status code, its content-type (or '') and the body as text. */
export interface UnixHttpResponse {
  status: number;
  contentType: string;
  body: string;
}

/**
 * Sends one HTTP/1.1 request over a Unix socket with `connection: close` and
 * reads the answer to the end. Not node:http: its client costs the hook and
 * `status`, which must start about as fast as a bare Node.js, a third of
 * that start (bench/nspawn-pre-start.sh), and one request to our own daemon
 * needs only a status line, two headers and the body. The request is written and the
 * socket left open: a client that half-closes makes Node's server abort the
 * request before it answers. Rejects with the socket's error, or with
 * "no answer within N ms" after `timeoutMs` of silence.
 */
export function requestOverUnixSocket(request: UnixHttpRequest): Promise<UnixHttpResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ path: request.socketPath });
    const chunks: Buffer[] = [];
    socket.setTimeout(request.timeoutMs, () => {
      socket.destroy(new Error(`no answer within ${request.timeoutMs} ms`));
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      socket.destroy();
      resolve(parseResponse(Buffer.concat(chunks)));
    });
    socket.write(requestText(request));
  });
}

function requestText(request: UnixHttpRequest): string {
  const head = [
    `${request.method} ${request.path} HTTP/1.1`,
    'host: localhost',
    'accept: application/json',
  ];
  if (request.body !== undefined) {
    head.push('content-type: application/json');
    head.push(`content-length: ${Buffer.byteLength(request.body)}`);
  }
  head.push('connection: close');
  return `${head.join('\r\n')}\r\n\r\n${request.body ?? ''}`;
}

/**
 * Splits an HTTP/1.1 response into its status and body, decoding a chunked
 * body. An answer that is not HTTP comes back as status 0 with the whole
 * text, which the caller reports as an answer that is not JSON.
 */
export function parseResponse(raw: Buffer): UnixHttpResponse {
  const headEnd = raw.indexOf('\r\n\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(raw.toString('latin1', 0, 16));
  if (headEnd < 0 || status === null) {
    return { status: 0, contentType: '', body: raw.toString('utf8') };
  }
  const head = raw.toString('latin1', 0, headEnd).toLowerCase();
  const rest = raw.subarray(headEnd + 4);
  const chunked = /\r\ntransfer-encoding:[ \t]*chunked/.test(head);
  const length = /\r\ncontent-length:[ \t]*(\d+)/.exec(head);
  const body = chunked
    ? decodeChunked(rest)
    : length === null
      ? rest
      : rest.subarray(0, Number(length[1]));
  const contentType = /\r\ncontent-type:[ \t]*([^\r]*)/.exec(head)?.[1]?.trim() ?? '';
  return { status: Number(status[1]), contentType, body: body.toString('utf8') };
}

// Each chunk is its size in hex, CRLF, the bytes, CRLF; a size of 0 ends the body.
function decodeChunked(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd < 0) break;
    const size = Number.parseInt(data.toString('latin1', offset, lineEnd), 16);
    if (!Number.isFinite(size) || size <= 0) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
