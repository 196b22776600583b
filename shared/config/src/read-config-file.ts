import { open, type FileHandle } from 'node:fs/promises';
import { constants, type Stats } from 'node:fs';
import { AgentError, errnoCode, messageOf } from '@aks-flex-node/log';

/** A config holds a few settings; anything near this size is not one. */
export const maxConfigBytes = 1024 * 1024;

/**
 * Reads a config file's text: it must be a regular file (a link to one is
 * fine) of at most {@link maxConfigBytes}. Checked on the open descriptor, so
 * a directory, a device such as `/dev/zero` or a FIFO is refused before a byte
 * is read, and a file that grows meanwhile is still read only up to the cap.
 * Throws INVALID_CONFIG naming the file and what is wrong with it.
 */
export async function readConfigFile(configPath: string): Promise<string> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer.
    handle = await open(configPath, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw openFailure(configPath, error);
  }
  try {
    const info = await handle.stat();
    refuseUnlessSmallRegularFile(configPath, info);
    const buffer = Buffer.alloc(maxConfigBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > maxConfigBytes) throw tooLarge(configPath, bytesRead);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } catch (error) {
    if (error instanceof AgentError) throw error;
    throw new AgentError('INVALID_CONFIG', `read ${configPath}: ${messageOf(error)}`, {
      path: configPath,
      cause: error,
      hint: "check the file's permissions",
    });
  } finally {
    await handle.close();
  }
}

function openFailure(configPath: string, error: unknown): AgentError {
  const code = errnoCode(error);
  const [reason, hint] =
    code === 'ENOENT'
      ? [
          'no such file',
          'install the agent with `aks-flex-node start`, which writes a default config',
        ]
      : code === 'ELOOP'
        ? ['its symbolic links form a loop', 'point the path at the JSON config file itself']
        : code === 'ENOTDIR'
          ? ['a parent of it is not a directory', 'name the JSON config file by its full path']
          : code === 'EACCES' || code === 'EPERM'
            ? [messageOf(error), "check the file's permissions"]
            : [messageOf(error), 'name the JSON config file by its full path'];
  return new AgentError('INVALID_CONFIG', `read ${configPath}: ${reason}`, {
    path: configPath,
    cause: error,
    hint,
  });
}

function refuseUnlessSmallRegularFile(configPath: string, info: Stats): void {
  if (!info.isFile()) {
    throw new AgentError(
      'INVALID_CONFIG',
      `read ${configPath}: it is ${describeKind(info)}, not a regular file`,
      {
        path: configPath,
        hint: 'name the JSON config file, for example /etc/aks-flex-node/config.json',
      },
    );
  }
  if (info.size > maxConfigBytes) throw tooLarge(configPath, info.size);
}

function tooLarge(configPath: string, bytes: number): AgentError {
  return new AgentError(
    'INVALID_CONFIG',
    `read ${configPath}: it is over ${maxConfigBytes} bytes (${bytes}), too large for a config`,
    {
      path: configPath,
      hint: 'check that the path names the agent config; a config holds a few settings',
    },
  );
}

function describeKind(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  return 'not a file';
}
