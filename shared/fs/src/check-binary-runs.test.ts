import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkBinaryRuns } from './check-binary-runs.js';
import { makeTempDir } from './test-support.js';

/** A stand-in agent that answers `version` and fails any other command with exit 2. */
const versionScript = `#!/bin/sh
if [ "$1" = version ]; then echo "aks-flex-node v1.2.3"; exit 0; fi
echo "unknown command: $1" >&2
exit 2
`;

async function writeScript(body: string, mode: number): Promise<string> {
  const file = path.join(await makeTempDir(), 'aks-flex-node-current');
  await writeFile(file, body, { mode });
  return file;
}

describe('checkBinaryRuns', () => {
  it('hostroot#85 a script answering version passes and its output is returned', async () => {
    const binary = await writeScript(versionScript, 0o755);
    expect(await checkBinaryRuns(binary)).toBe('aks-flex-node v1.2.3\n');
  });

  it.each([
    [
      'hostroot#85 the same script at 0644 is refused with a noexec hint',
      () => writeScript(versionScript, 0o644),
      {},
      /could not be started \(EACCES\)/,
    ],
    [
      'hostroot#85 a missing binary is refused, naming it',
      async () => path.join(await makeTempDir(), 'missing'),
      {},
      /could not be started \(ENOENT\)/,
    ],
    [
      'a non-zero exit names the code and the end of stderr',
      () => writeScript(versionScript, 0o755),
      { args: ['agent'] },
      /exit code 2; stderr: unknown command: agent/,
    ],
    [
      'a binary killed by a signal names the signal',
      () => writeScript('#!/bin/sh\nkill -9 $$\n', 0o755),
      {},
      /killed by signal SIGKILL/,
    ],
    [
      'a binary that does not exit in time is killed and refused',
      () => writeScript('#!/bin/sh\nexec sleep 30\n', 0o755),
      { timeoutMs: 200 },
      /did not exit within 200 ms/,
    ],
  ])('%s', async (_name, makeBinary, options, reason) => {
    const binary = await makeBinary();
    const error: unknown = await checkBinaryRuns(binary, options).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'AgentError', code: 'NOT_EXECUTABLE', path: binary });
    const { message, hint } = error as { message: string; hint: string };
    expect(message.startsWith(`run ${binary} `)).toBe(true);
    expect(message).toMatch(reason);
    expect(hint).toContain('mount | grep noexec');
  });
});
