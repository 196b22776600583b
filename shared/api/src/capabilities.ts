/**
 * Capabilities a build announces in `version --json`. `host-root` means the
 * build finds its files under the host root; an upgrade refuses a candidate
 * without it on a host whose root is a real directory. Kept apart from the
 * zod schemas so that `version`, a hot role, bundles no zod.
 */
export const capabilities = ['host-root', 'api-v1'] as const;
