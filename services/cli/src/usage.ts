/**
 * What `-h`/`--help` prints, for the whole command and for each command. The
 * commands listed here are the ones that exist; a hint elsewhere names only these.
 */
export const topUsage = `usage: aks-flex-node <command> [flags]
       aks-flex-node -h | --help | --version

commands:
  version [--json]                 print this build's version
  status [--json]                  what the running daemon reports
  operations [ID] [--json]         the running operation and the records of finished ones
  host-root [--resolved] [--json]  where the agent's files will be (--resolved: are now)
  host-root --migrate [--json]     link an earlier release's installation (asks the daemon)
  start [--config PATH] [--json]   install this binary as the agent and start it (root)
  agent-upgrade --url URL [--sha256 HEX] [--json]
                                   upgrade the agent blue/green from a release archive
  agent-upgrade [--candidate PATH] [--preflight] [--json]
                                   activate a binary already on the host, by default this one
                                   (--preflight: plan only)
  recover-agent-upgrade --message TEXT
                                   restore last-good after a failed upgrade (the recovery unit runs it)
  preflight [--config PATH] [--output text|json] [--json]
                                   check the host before an install, changing nothing
  fetch-bootstrap-data --cluster-resource-id ID --agent-pool-name NAME --auth MODE --output PATH
                                   fetch fresh join data from AKS into PATH (0600; bootstrap.sh runs it)
  reset [--yes] [--json]           stop the agent and remove its units and helpers, keeping
                                   its binary and config for a rejoin (asks the daemon)
  token kubelogin|arc [flags]      the kubelet's exec credential: an ExecCredential on stdout
  agent --config PATH              run the daemon (as the agent unit does)
  help                             print this text

Every command takes -h or --help. See docs/cli.md for every command and its exit codes.`;

const commandUsage: Record<string, string> = {
  version: `usage: aks-flex-node version [--json]

Prints this build's version. --json prints version, commit, arch (amd64 or
arm64), node and capabilities.`,
  status: `usage: aks-flex-node status [--json]

Asks the running daemon what it reports: pid, uptime, version, executable,
socket, host root, and whether an activation runs.`,
  'host-root': `usage: aks-flex-node host-root [--resolved | --planned] [--json]
       aks-flex-node host-root --migrate [--json]

Plain: the host root this host keeps the agent's files under once migrated,
as one path on one line (--planned says the same). --resolved: where they are
now. --json: path, resolved, planned, state, legacyReleased. Changes nothing.
--migrate links an earlier release's installation (root); it asks the daemon,
and migrates itself under the activation lock only when none answers.`,
  start: `usage: aks-flex-node start [--config PATH] [--json]

Installs this binary as the agent under the host root, writes the config
(PATH, or a default when the host has none) and the units, enables and starts
the agent and waits until it answers. Needs root and systemd. On a terminal it
prints sentences; --json prints log lines on stderr and the status as JSON.`,
  'agent-upgrade': `usage: aks-flex-node agent-upgrade --url URL [--sha256 HEX] [--json] [--timeout SECONDS]
       aks-flex-node agent-upgrade [--candidate PATH] [--preflight] [--json] [--timeout SECONDS]
       aks-flex-node agent-upgrade --cancel ID [--json]

--url upgrades the agent blue/green from a release archive
(aks-flex-node-linux-<amd64|arm64>.tar.gz, https, http or file URL).
--candidate activates a binary already on the host; without --url or
--candidate the candidate is this binary. --preflight prints the plan and
changes nothing. --cancel asks the daemon to cancel an upgrade that has not
begun to switch (Ctrl-C on a foreground --url upgrade asks the same).
Activation needs root.`,
  'recover-agent-upgrade': `usage: aks-flex-node recover-agent-upgrade --message TEXT

Records that the upgraded daemon failed and restores the last-good binary,
under the activation lock. The recovery unit runs it through last-good. Needs root.`,
  'guard-agent-upgrade': `usage: aks-flex-node guard-agent-upgrade [--deadline-seconds N]

Run by the upgrade guard unit: rolls back a switched candidate that does not
come up in time.`,
  reset: `usage: aks-flex-node reset [--yes] [--json]

Stops the agent and removes its units, helpers and upgrade state under both
roots, and the node the Go agent library set up: the nspawn machines (stopped
first), LocalDNS, WireGuard and overlay interfaces, policy routes, WireGuard
keys and the legacy bridge CNI. Keeps its binary and config for a rejoin
(also: unbootstrap). A link named localdns that is not a dummy is left and
reported. Asks the
daemon; only when none answers does it reset the host itself, under the
activation lock. Prompts only on a terminal without --yes. Needs root.`,
  'nspawn-lifecycle': `usage: aks-flex-node nspawn-lifecycle pre-start|post-start|reconcile MACHINE

Run by an nspawn machine's generated hooks, not by operators. pre-start asks
the daemon to migrate and rewrite the machine's hooks; with no daemon, or a
refusal, the machine starts with the hooks it has. MACHINE is kube1 or kube2.`,
  preflight: `usage: aks-flex-node preflight [--config PATH] [--output text|json] [--json]

Checks the host before an install, changing nothing: the install directory
under the planned host root must be creatable and not on a filesystem mounted
noexec (the error names the mount). Exits 1 when a check fails.`,
  'fetch-bootstrap-data': `usage: aks-flex-node fetch-bootstrap-data --cluster-resource-id ID --agent-pool-name NAME
         --auth arc|msi|service-principal --output PATH [--msi-client-id ID]
         [--sp-tenant-id ID --sp-client-id ID (--sp-client-secret-file PATH
          | --sp-client-certificate-file PATH | --sp-client-credential-file PATH)]
         [--resource-manager-endpoint URL] [--authority-host URL] [--api-version V]

Gets a token for Azure Resource Manager as the node's identity (Arc, the
VM's managed identity through IMDS, or a service principal with a secret or
a PEM or .pfx certificate), calls AKS's listBootstrapData for the agent pool,
and writes the answer (a short-lived bootstrap token, versions, cluster
settings) to PATH, mode 0600. It never prints the data. bootstrap.sh runs it
and merges the answer into the config. An inline secret comes only from
AKS_FLEX_NODE_SP_CLIENT_SECRET, removed from the environment at once.
AKS_FLEX_NODE_IMDS_ENDPOINT moves IMDS; plain-http endpoints need
AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS=true (local test servers only).
Defaults: https://management.azure.com, https://login.microsoftonline.com,
api-version 2026-05-02-preview. Exits 9 when a service could not be reached
or failed for now (network, 5xx, 429), 12 when it refused the identity or
the target (401, 403, 404), 2 for a flag it cannot use.`,
  token: `usage: aks-flex-node token kubelogin [--server-id ID] [--client-certificate-file FILE]
                                          [--pop-enabled --pop-claims u=ID]
       aks-flex-node token arc [--server-id ID]

The kubelet's exec credential plugin: prints an ExecCredential (the version
KUBERNETES_EXEC_INFO asks for, v1 or v1beta1, v1 when unset) with a token for
the API server (--server-id, default the AKS server 6dae42f8-4368-4678-94ff-3960e28e3630)
and its expiry. kubelogin reads kubelogin's environment: AAD_LOGIN_METHOD spn
(AZURE_TENANT_ID, AAD_SERVICE_PRINCIPAL_CLIENT_ID, AAD_SERVICE_PRINCIPAL_CLIENT_SECRET
or a client certificate, PEM or .pfx), msi (AZURE_CLIENT_ID optional) or
workloadidentity (AZURE_FEDERATED_TOKEN_FILE). arc uses the Arc agent's local
identity endpoint (IDENTITY_ENDPOINT). Tokens are cached root-only under
/run/aks-flex-node/token-cache until five minutes before they expire.
AKS_FLEX_NODE_AUTHORITY_HOST (or AZURE_AUTHORITY_HOST) and AKS_FLEX_NODE_IMDS_ENDPOINT
move the token services. Errors go to stderr with a non-zero exit. PoP tokens
(--pop-enabled) are refused (exit 2): this release issues bearer tokens only.`,
  agent: `usage: aks-flex-node agent [--config PATH]

Runs the daemon, as the agent unit does (also: daemon). Needs root.`,
  operations: `usage: aks-flex-node operations [ID] [--json]

Without ID: the operation the daemon runs now (id, kind, state, phase,
progress) and the records of the last 20 finished operations (upgrades and
resets), newest first. With ID: that operation in full, its result, error
code and hint. Records are kept in /var/lib/aks-flex-node/operations and
outlive the daemon and a reset, so this answers with no daemon too.`,
  help: `usage: aks-flex-node help

Prints the list of commands.`,
};
commandUsage.daemon = commandUsage.agent ?? '';
commandUsage.bootstrap = commandUsage.start ?? '';
commandUsage.unbootstrap = commandUsage.reset ?? '';

/** Every command the executable dispatches; hints and docs name only these. */
export const commandNames: readonly string[] = Object.keys(commandUsage);

/** The usage of one command, or the top-level usage for a name it does not know. */
export function usageOf(command: string): string {
  return commandUsage[command] ?? topUsage;
}

/** Whether the arguments ask for help: `-h` or `--help` anywhere among them. */
export function asksForHelp(args: readonly string[]): boolean {
  return args.includes('-h') || args.includes('--help');
}
