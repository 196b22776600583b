import { runReportingErrors } from '../roles/run-reporting-errors.js';

/**
 * `fetch-bootstrap-data`: a bundle of its own, because it alone (with
 * `token`) loads the Azure credential libraries, which no other role should
 * pay for at its start. bootstrap.sh runs it once, at first boot.
 */
export function runBundleRole(role: string, args: string[]): Promise<number> {
  return runReportingErrors(async () => {
    if (role !== 'fetch-bootstrap-data') throw new Error(`no fetch-bootstrap-data role "${role}"`);
    const [{ runFetchBootstrapData }, { getArmToken }] = await Promise.all([
      import('../commands/fetch-bootstrap-data.js'),
      import('../bootstrap-data/arm-token.js'),
    ]);
    return (argv) =>
      runFetchBootstrapData(argv, {
        env: process.env,
        getArmToken,
        fetch,
        report: (line) => process.stderr.write(`${line}\n`),
      });
  }, args);
}
