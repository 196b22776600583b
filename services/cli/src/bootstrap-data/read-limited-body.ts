/**
 * Reads a response body as text, up to `limit` bytes. Throws when the body
 * is longer, and stops reading there, so a runaway answer cannot fill memory.
 */
export async function readLimitedBody(response: Response, limit: number): Promise<string> {
  if (response.body === null) return '';
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response.body) {
    const bytes: Buffer = Buffer.from(chunk as Uint8Array);
    total += bytes.byteLength;
    // Leaving the loop cancels the stream, and with it the connection.
    if (total > limit) throw new Error(`the answer is over ${limit} bytes`);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}
