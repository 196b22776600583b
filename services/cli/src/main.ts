import { exitCodes } from '@aks-flex-node/api';
import { runVersion } from './commands/version.js';
import { dropOutputOnceReaderCloses, printLine, reportError } from './output.js';
import {
  bundleFor,
  isMainRoleName,
  isRoleName,
  type RoleName,
  type RoleNameIn,
} from './roles/role-homes.js';
import { runBundle } from './roles/run-bundle.js';
import { runReportingErrors } from './roles/run-reporting-errors.js';
import type { RunRole } from './roles/run-role.js';
import { asksForHelp, topUsage, usageOf } from './usage.js';

/**
 * Every role is this one executable. The entry dispatches first and each
 * role loads only what it needs: `version` and `help` are here, every other
 * role is in a bundle evaluated only when it runs (roles/role-homes.ts).
 */
const mainRoles: Record<RoleNameIn<'main'>, RunRole> = {
  version: runVersion,
  help: runHelp,
};

function runHelp(): Promise<number> {
  printLine(topUsage);
  return Promise.resolve(0);
}

function runRole(name: RoleName, args: string[]): Promise<number> {
  if (isMainRoleName(name)) return runReportingErrors(() => Promise.resolve(mainRoles[name]), args);
  // The bundle reports its own errors: it holds its own copy of AgentError.
  return runBundle(bundleFor(name, args), name, args);
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  // Help and --version before anything is loaded: they must work on any host, as any user.
  if (name === '-h' || name === '--help') return runHelp();
  if (name === '--version') return runRole('version', []);
  if (name === undefined || !isRoleName(name)) {
    process.stderr.write(
      `error: ${name === undefined ? 'no command given' : `unknown command "${name}"`}\n${topUsage}\n`,
    );
    return exitCodes.usage.code;
  }
  if (asksForHelp(args)) {
    printLine(usageOf(name));
    return 0;
  }
  return runRole(name, args);
}

// Before anything is written: a reader may stop at any line.
dropOutputOnceReaderCloses();
// process.exitCode rather than process.exit(): pending output is flushed first.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = reportError(error);
  },
);
