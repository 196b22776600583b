/** A unit that does nothing but stay up, for proving the harness without the product. */
export const sleeperUnit = `[Unit]
Description=e2e harness self-test sleeper

[Service]
ExecStart=/bin/sleep infinity

[Install]
WantedBy=multi-user.target
`;

export const sleeperUnitFile = '/etc/systemd/system/e2e-sleeper.service';

/** A script a scenario tries to execute from a directory that may be mounted noexec. */
export const helloScript = '#!/bin/sh\necho hello from $0\n';
