/**
 * What reset asks of systemd, behind one small object so tests pass a fake
 * that records the calls (and the order they came in) instead of a real
 * systemctl.
 */
export interface ResetEffects {
  /**
   * Stops restarts of the agent that are queued but have not fired: the Go
   * releases' `aks-flex-node-agent-upgrade-restart-*` transient units and a
   * pending restart job of the agent unit. One that fired mid-reset would start
   * the daemon again, which would rewrite the units reset is removing.
   */
  cancelQueuedRestarts(): Promise<void>;
  /** `systemctl disable --now UNIT`. Throws SYSTEMD_FAILED. */
  disableNow(unit: string): Promise<void>;
  /** `systemctl disable UNITS`; a unit without a unit file is skipped by the caller. Throws SYSTEMD_FAILED. */
  disable(units: readonly string[]): Promise<void>;
  /** `systemctl stop UNITS`, waiting for the stop; a unit systemd has not loaded counts as stopped. Throws SYSTEMD_FAILED. */
  stop(units: readonly string[]): Promise<void>;
  /** `systemctl daemon-reload`. Throws SYSTEMD_FAILED. */
  daemonReload(): Promise<void>;
  /**
   * Terminates the machine systemd-machined knows by this name, whatever
   * runs it (`machinectl terminate`, as the Go releases' machine drop-in
   * does), and waits until it is gone; returns whether one was running. A
   * machine started by hand (systemd-nspawn from a shell, machinectl from
   * another unit) outlives the stop of `systemd-nspawn@MACHINE.service`. A
   * host without machinectl has no machined, so no such machine. Throws
   * SYSTEMD_FAILED.
   */
  terminateMachine(machine: string): Promise<boolean>;
}
