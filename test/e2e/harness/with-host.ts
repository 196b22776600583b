import { collectDiagnostics } from './diagnostics.js';
import type { BootHostOptions, Host } from './host.js';
import { bootHost } from './host.js';

/**
 * Boots a throwaway host, runs the scenario on it and always disposes of
 * it. When the scenario throws, the journals of the agent, recovery and
 * first-boot units and the layout tree are printed to stderr before the
 * error goes on, so a red run shows what the host looked like.
 */
export async function withHost<T>(
  options: BootHostOptions,
  scenario: (host: Host) => Promise<T>,
): Promise<T> {
  const host = await bootHost(options);
  try {
    return await scenario(host);
  } catch (err) {
    process.stderr.write(
      `\n=== ${host.name} (${host.variant}): scenario failed; host state follows ===\n` +
        `${await collectDiagnostics(host)}\n=== end of ${host.name} ===\n`,
    );
    throw err;
  } finally {
    await host.dispose();
  }
}
