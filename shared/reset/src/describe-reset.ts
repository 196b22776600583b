import type { ResetReport } from './reset-agent.js';

/** One sentence for the operation record and the CLI: what went, what was kept, and what was left and why. */
export function describeResetReport(report: ResetReport): string {
  const kept =
    report.keptBinary === undefined
      ? 'no agent binary was left to keep'
      : `kept ${report.keptBinary} for a rejoin`;
  const left = report.left.length === 0 ? '' : `; left ${report.left.join('; ')}`;
  const ended =
    report.endedUpgrade === undefined
      ? ''
      : `; ended AgentUpgrade ${report.endedUpgrade}, which no daemon had recorded`;
  return `removed ${report.removed.length} path(s); ${kept}${left}${ended}`;
}
