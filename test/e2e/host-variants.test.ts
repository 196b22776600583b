import { describe, expect, it } from 'vitest';
import { describeSelinuxSupport, layOutFixture, runOrThrow, withHost } from './harness/index.js';
import { helloScript } from './self-test-fixtures.js';

const harnessOnly = { empty: 'a check of the harness itself, which runs without a product build' };

describe('harness: host variants', () => {
  it('acl: /usr (with /usr/local) is read-only while /opt, /etc and /var are writable', async () => {
    await withHost({ variant: 'acl', name: 'ro-usr', node: harnessOnly }, async (host) => {
      for (const target of ['/usr/local/bin/probe', '/usr/lib/probe', '/bin/probe']) {
        const result = await host.run(['touch', target]);
        expect(result.exitCode, target).not.toBe(0);
        expect(result.stderr).toContain('Read-only file system');
      }
      await runOrThrow(host, 'touch /opt/probe /etc/probe /var/probe');
    });
  });

  it('acl: there is no package manager', async () => {
    await withHost({ variant: 'acl', name: 'no-apt', node: harnessOnly }, async (host) => {
      for (const tool of ['apt', 'apt-get', 'dpkg', 'dpkg-query']) {
        expect((await host.run(['bash', '-c', `command -v ${tool}`])).exitCode, tool).toBe(1);
      }
      expect((await host.run('test -e /var/lib/dpkg')).exitCode).toBe(1);
    });
  });

  it('noexec: a script in /opt is refused, the same script in /var/tmp runs', async () => {
    await withHost({ variant: 'noexec', name: 'noexec', node: harnessOnly }, async (host) => {
      await layOutFixture(host, {
        '/opt/hello.sh': { kind: 'file', content: helloScript, mode: 0o755 },
        '/var/tmp/hello.sh': { kind: 'file', content: helloScript, mode: 0o755 },
      });
      const refused = await host.run(['/opt/hello.sh']);
      expect(refused.exitCode).toBe(126);
      expect(refused.stderr).toContain('Permission denied');
      expect((await runOrThrow(host, ['/var/tmp/hello.sh'])).stdout).toContain('hello');
    });
  });

  it('plain: a script in /opt runs', async () => {
    await withHost({ variant: 'plain', name: 'exec-opt', node: harnessOnly }, async (host) => {
      await layOutFixture(host, {
        '/opt/hello.sh': { kind: 'file', content: helloScript, mode: 0o755 },
      });
      expect((await runOrThrow(host, ['/opt/hello.sh'])).stdout).toContain('hello');
    });
  });

  // Containers share this machine's kernel, which has no SELinux; the reason
  // is part of the name so that it shows in every reporter.
  it.skip(`selinux: relabelling on an enforcing host [${describeSelinuxSupport()}]`, () =>
    undefined);
});
