import { statusResponseSchema, type StatusResponse } from '@aks-flex-node/api';

const daemonSchema = statusResponseSchema.shape.daemon;
const uptimeSchema = daemonSchema.shape.uptimeSeconds;
const restSchema = statusResponseSchema.omit({ daemon: true });
type Daemon = StatusResponse['daemon'];
type Rest = Omit<StatusResponse, 'daemon'>;

/** Stands in for the uptime while the daemon part is written once, then is cut out. */
const uptimeMark = '\u0000uptime\u0000';

/**
 * The status route's serializer: the same zod validation as every route
 * (nothing outside the schema is sent), but what changes only when the host,
 * the gate or the daemon's own identity does is validated and stringified
 * once per change: the rest of the answer recognised by object identity
 * (the host view and the gate keep one object per state), the daemon part by
 * its fields' values. Per request only the uptime is validated and written.
 * Under a poll the full parse was the largest cost of a status request the
 * daemon controls. The output is byte for byte what
 * `JSON.stringify(statusResponseSchema.parse(data))` writes: `daemon` is the
 * schema's first key, and the daemon part keeps the schema's key order.
 */
export function createStatusSerializer(): (data: StatusResponse) => string {
  let last: Rest | undefined;
  let restJson = '';
  let lastDaemon: Daemon | undefined;
  let daemonHead = '';
  let daemonTail = '';
  return (data) => {
    if (
      last === undefined ||
      last.version !== data.version ||
      last.hostRoot !== data.hostRoot ||
      last.activationInProgress !== data.activationInProgress ||
      last.startup !== data.startup ||
      last.machineCopy !== data.machineCopy ||
      // A new object at each answer: an operation's phase and progress change between requests.
      data.operations !== undefined ||
      last.operations !== undefined
    ) {
      const rest: Rest = {
        version: data.version,
        hostRoot: data.hostRoot,
        activationInProgress: data.activationInProgress,
        startup: data.startup,
        ...(data.machineCopy === undefined ? {} : { machineCopy: data.machineCopy }),
        ...(data.operations === undefined ? {} : { operations: data.operations }),
      };
      // Without its opening brace: it follows the daemon part in one object.
      restJson = JSON.stringify(restSchema.parse(rest)).slice(1);
      last = rest;
    }
    const daemon = data.daemon;
    if (lastDaemon === undefined || !sameBesidesUptime(lastDaemon, daemon)) {
      // The whole part is validated as it is, then written with a mark where the uptime goes.
      const parsed = daemonSchema.parse(daemon);
      const [head, tail] = JSON.stringify({ ...parsed, uptimeSeconds: uptimeMark }).split(
        JSON.stringify(uptimeMark),
      ) as [string, string];
      daemonHead = `{"daemon":${head}`;
      daemonTail = `${tail},`;
      lastDaemon = { ...daemon };
    } else {
      uptimeSchema.parse(daemon.uptimeSeconds);
    }
    return `${daemonHead}${JSON.stringify(daemon.uptimeSeconds)}${daemonTail}${restJson}`;
  };
}

/**
 * Whether two daemon parts hold the same fields with the same values, the
 * uptime aside. Every field is compared, not a list of the schema's: a field
 * added to the schema is never served stale, and one the schema does not
 * know still reaches validation (and fails it) instead of being dropped.
 */
function sameBesidesUptime(last: Daemon, daemon: Daemon): boolean {
  const before: Record<string, unknown> = last;
  const now: Record<string, unknown> = daemon;
  const keys = Object.keys(now);
  return (
    keys.length === Object.keys(before).length &&
    keys.every((key) => key === 'uptimeSeconds' || (key in before && before[key] === now[key]))
  );
}
