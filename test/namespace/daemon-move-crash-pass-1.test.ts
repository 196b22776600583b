import { describeDaemonMoveCrash, passOneFailpoints } from './daemon-move-crash.js';

// Pass 1 of the move, the daemon running from the legacy root: the other
// half of the failpoints is in daemon-move-crash-pass-2.test.ts.
describeDaemonMoveCrash('pass 1', passOneFailpoints);
