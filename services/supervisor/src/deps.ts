import type {
  HostRootResponse,
  MigrateResponse,
  RegenerateNspawnHooksResponse,
  VersionInfo,
} from '@aks-flex-node/api';
import type { NspawnMachine } from '@aks-flex-node/layout';
import type { AgentError, Logger } from '@aks-flex-node/log';
import type { HostView } from './host-view.js';
import type { ResetService } from './reset/reset-service.js';
import type { StartupView } from './startup/startup-gate.js';
import type { OperationRegistry } from './upgrade/operation-registry.js';
import type { UpgradeService } from './upgrade/upgrade-service.js';

/** What the API needs to know about the host root; the real one wraps shared/hostroot. */
export interface HostRootService {
  describe(): Promise<HostRootResponse>;
  /** Runs Migrate; the caller holds the activation lock. */
  migrate(): Promise<MigrateResponse>;
}

/** The nspawn pre-start hook's request; the real one wraps shared/nspawn. */
export interface NspawnHooksService {
  /**
   * The answer when the request would change nothing (the root installed,
   * the helper this executable, the hooks as they would be written), read
   * without the activation lock; undefined otherwise, or while a mutation
   * runs. The pre-start hook runs at every machine start, and most find
   * nothing to do.
   */
  unchanged(machine: NspawnMachine): Promise<RegenerateNspawnHooksResponse | undefined>;
  /** Migrates, then rewrites the machine's hooks under the resolved root; the caller holds the activation lock. */
  regenerate(machine: NspawnMachine): Promise<RegenerateNspawnHooksResponse>;
}

/** Process-wide services the routes use, passed in so tests can build the app without a host. */
export interface SupervisorDeps {
  log: Logger;
  version: VersionInfo;
  hostRoot: HostRootService;
  nspawnHooks: NspawnHooksService;
  upgrades: UpgradeService;
  operations: OperationRegistry;
  reset: ResetService;
  /** Runs a mutation: one at a time, under the activation lock. */
  runMutation<T>(purpose: string, work: () => Promise<T>): Promise<T>;
  /** The host and activation state as the daemon keeps it for status (host-view.ts). */
  hostView: Pick<HostView, 'read'>;
  /** The startup gate: while shut, every change but a recovery is refused at once. */
  startup: {
    refusal(purpose: string): AgentError | undefined;
    view(): StartupView;
  };
  daemon: {
    pid: number;
    startedAt: number;
    executable: string;
    socket: 'systemd' | 'self-bound';
    socketPath: string;
  };
  /** Milliseconds since some fixed point; injectable for tests. */
  now(): number;
}
