/**
 * The executable's script bundles. `main` is the dispatcher, which the
 * executable runs at every start; each other one is an asset of the
 * executable (the entry of the same name in `src/bundles/`), evaluated only
 * when one of its roles runs. V8 then reads at each start only the code of
 * the role that runs, not the daemon's megabytes (DESIGN.md 3, "Start-up cost").
 */
export const bundleNames = [
  'cold',
  'fetch-bootstrap-data',
  'host-root',
  'host-root-migrate',
  'nspawn-lifecycle',
  'status',
  'token',
  'token-issue',
] as const;

/** One of {@link bundleNames}. */
export type BundleName = (typeof bundleNames)[number];

/**
 * Which bundle holds each role. The hot roles, which run often (`version` in
 * every upgrade's verification, the nspawn hook at every machine start,
 * `host-root` in the Go releases' scripts, `status`), are in `main` or in a
 * bundle of their own that holds none of the daemon's libraries. The
 * others, which run rarely or for long, share the `cold` bundle. No role
 * has `token-issue` for home: the `token` bundle runs it on a cache miss.
 */
export const roleHomes = {
  version: 'main',
  help: 'main',
  status: 'status',
  'host-root': 'host-root',
  // Hidden: the nspawn machines' generated hooks run it, operators do not.
  'nspawn-lifecycle': 'nspawn-lifecycle',
  // The kubelet's exec credential plugin, at every token refresh: the cache
  // hit here, the rest in `token-issue` (bundles/token.ts).
  token: 'token',
  agent: 'cold',
  daemon: 'cold',
  start: 'cold',
  bootstrap: 'cold',
  'agent-upgrade': 'cold',
  'recover-agent-upgrade': 'cold',
  'guard-agent-upgrade': 'cold',
  reset: 'cold',
  unbootstrap: 'cold',
  preflight: 'cold',
  operations: 'cold',
  // Loads the Azure credential libraries, which no other role should pay for.
  'fetch-bootstrap-data': 'fetch-bootstrap-data',
} as const satisfies Record<string, BundleName | 'main'>;

/** A role the executable answers to. */
export type RoleName = keyof typeof roleHomes;

/** The roles whose home is `Home`. */
export type RoleNameIn<Home extends BundleName | 'main'> = {
  [Name in RoleName]: (typeof roleHomes)[Name] extends Home ? Name : never;
}[RoleName];

/** The roles the `cold` bundle holds; bundles/cold.ts must load each of them. */
export type ColdRoleName = RoleNameIn<'cold'>;

/** Whether the role runs from the main bundle, the dispatcher's own. */
export function isMainRoleName(name: RoleName): name is RoleNameIn<'main'> {
  return roleHomes[name] === 'main';
}

/**
 * The bundle that runs `name` with these arguments: its home, except that
 * `host-root --migrate` runs from a bundle of its own, since the typed
 * client, the lock and the logger it needs would slow every plain
 * `host-root`, which the Go releases' scripts run often. The dispatcher
 * decides this, so that no bundle loads another (an import cycle).
 */
export function bundleFor(
  name: Exclude<RoleName, RoleNameIn<'main'>>,
  args: readonly string[],
): BundleName {
  const end = args.indexOf('--');
  const flags = end === -1 ? args : args.slice(0, end);
  if (name === 'host-root' && flags.includes('--migrate')) return 'host-root-migrate';
  return roleHomes[name];
}

/** Whether `name` is a role the executable answers to. */
export function isRoleName(name: string): name is RoleName {
  return Object.hasOwn(roleHomes, name);
}
