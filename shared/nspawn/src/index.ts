/** The nspawn machines' hooks: the lifecycle helper, its rendering and its (re)writing. */
export {
  installNspawnLifecycleHelper,
  installNspawnLifecycleHelperUnder,
  nspawnLifecycleHelperUnder,
} from './install-nspawn-lifecycle-helper.js';
export { nspawnHookFiles } from './nspawn-hook-files.js';
export type { NspawnHookFiles } from './nspawn-hook-files.js';
export { renderNspawnHooks } from './render-nspawn-hooks.js';
export {
  currentNspawnHooks,
  machinesWithHooks,
  rewriteNspawnHooks,
} from './rewrite-nspawn-hooks.js';
export type { RewriteNspawnHooksOptions, RewrittenNspawnHooks } from './rewrite-nspawn-hooks.js';
export { rewriteLocalDnsUnit } from './rewrite-local-dns-unit.js';
export type { RewrittenLocalDnsUnit } from './rewrite-local-dns-unit.js';
