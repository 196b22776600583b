import { statusResponseSchema, type StatusResponse } from '@aks-flex-node/api';

const daemonSchema = statusResponseSchema.shape.daemon;
const restSchema = statusResponseSchema.omit({ daemon: true });
type Rest = Omit<StatusResponse, 'daemon'>;

/**
 * The status route's serializer: the same zod validation as every route
 * (nothing outside the schema is sent), but the parts that change only when
 * the host or the gate does (version, host root, activation, startup) are
 * validated and stringified once per change, recognised by object identity
 * (the host view and the gate keep one object per state), and only the small
 * `daemon` part, whose uptime moves, is done per request. Under a poll the
 * full parse was the largest cost of a status request the daemon controls.
 * The output is byte for byte what `JSON.stringify(statusResponseSchema.parse(data))`
 * writes: `daemon` is the schema's first key.
 */
export function createStatusSerializer(): (data: StatusResponse) => string {
  let last: Rest | undefined;
  let restJson = '';
  return (data) => {
    if (
      last === undefined ||
      last.version !== data.version ||
      last.hostRoot !== data.hostRoot ||
      last.activationInProgress !== data.activationInProgress ||
      last.startup !== data.startup
    ) {
      const rest: Rest = {
        version: data.version,
        hostRoot: data.hostRoot,
        activationInProgress: data.activationInProgress,
        startup: data.startup,
      };
      // Without its opening brace: it follows the daemon part in one object.
      restJson = JSON.stringify(restSchema.parse(rest)).slice(1);
      last = rest;
    }
    return `{"daemon":${JSON.stringify(daemonSchema.parse(data.daemon))},${restJson}`;
  };
}
