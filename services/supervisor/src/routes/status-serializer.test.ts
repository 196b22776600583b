import { describe, expect, it } from 'vitest';
import { statusResponseSchema, type StatusResponse } from '@aks-flex-node/api';
import { createStatusSerializer } from './status-serializer.js';

const status: StatusResponse = {
  daemon: {
    pid: 7,
    uptimeSeconds: 1.5,
    executable: '/usr/local/bin/aks-flex-node',
    socket: 'systemd',
    socketPath: '/run/aks-flex-node/agent.sock',
  },
  version: { version: '1.2.3', commit: 'abc', arch: 'amd64', node: '24', capabilities: ['x'] },
  hostRoot: {
    path: '/opt/unbounded/agent',
    resolved: '/usr/local',
    planned: '/usr/local',
    state: 'linked',
    legacyReleased: false,
  },
  activationInProgress: false,
  startup: { gate: 'open', move: 'left-alone' },
};

describe('the status serializer', () => {
  it('writes exactly what the schema-validated JSON.stringify writes, request after request', () => {
    const serialize = createStatusSerializer();
    expect(serialize(status)).toBe(JSON.stringify(statusResponseSchema.parse(status)));
    const later = { ...status, daemon: { ...status.daemon, uptimeSeconds: 9 } };
    expect(serialize(later)).toBe(JSON.stringify(statusResponseSchema.parse(later)));
  });

  it('writes a new host root or gate once they are new objects', () => {
    const serialize = createStatusSerializer();
    serialize(status);
    const moved = {
      ...status,
      hostRoot: { ...status.hostRoot, state: 'installed' as const },
      startup: { gate: 'shut' as const, reason: 'moving' },
    };
    expect(JSON.parse(serialize(moved))).toMatchObject({
      hostRoot: { state: 'installed' },
      startup: { gate: 'shut', reason: 'moving' },
    });
  });

  it('refuses a daemon part outside the schema', () => {
    const serialize = createStatusSerializer();
    const bad = { ...status, daemon: { ...status.daemon, pid: 1.5 } };
    expect(() => serialize(bad)).toThrow();
  });

  it('validates the uptime of every request, also once the daemon part is kept', () => {
    const serialize = createStatusSerializer();
    serialize(status);
    const bad = { ...status, daemon: { ...status.daemon, uptimeSeconds: Number.NaN } };
    expect(() => serialize(bad)).toThrow();
  });

  it('writes a daemon part whose identity changed, and refuses one with a field outside the schema', () => {
    const serialize = createStatusSerializer();
    serialize(status);
    const other = {
      ...status,
      daemon: { ...status.daemon, pid: 8, socket: 'self-bound' as const, socketPath: '/x"y' },
    };
    expect(serialize(other)).toBe(JSON.stringify(statusResponseSchema.parse(other)));
    const extra = { ...status, daemon: { ...status.daemon, secret: 'no' } };
    expect(() => serialize(extra as StatusResponse)).toThrow();
  });

  it('writes a change of any one daemon field, each on its own', () => {
    const serialize = createStatusSerializer();
    serialize(status);
    const changes = [
      { pid: 9 },
      { executable: '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-green' },
      { socket: 'self-bound' as const },
      { socketPath: '/run/elsewhere.sock' },
    ];
    for (const change of changes) {
      const changed = { ...status, daemon: { ...status.daemon, ...change } };
      expect(serialize(changed), JSON.stringify(change)).toBe(
        JSON.stringify(statusResponseSchema.parse(changed)),
      );
      serialize(status);
    }
  });
});
