import { execFileSync } from 'node:child_process';
import { reinstallCommand } from '@aks-flex-node/layout';
import { recoveryScriptTemplate } from '@aks-flex-node/units';
import { describe, expect, it } from 'vitest';

// The recovery shim keeps its own copy of the reinstall command (it must run
// with no agent binary that works); this keeps the copy equal to the one rule.
describe('the recovery shim reinstall command', () => {
  it.each([['x86_64', 'amd64'] as const, ['aarch64', 'arm64'] as const])(
    'issue28#7 on %s it prints exactly reinstallCommand(%s)',
    (machine, arch) => {
      const printed = execFileSync(
        'bash',
        [
          '-c',
          // The script's definitions without its call to main; uname answers as that machine.
          `uname() { echo ${machine}; }\n${recoveryScriptTemplate.replace(/\nmain "\$@"\n$/, '\n')}\nreinstall_command`,
        ],
        { encoding: 'utf8' },
      );
      expect(printed.trim()).toBe(reinstallCommand(arch));
    },
  );
});
