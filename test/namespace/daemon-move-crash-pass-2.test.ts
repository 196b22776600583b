import { describeDaemonMoveCrash, passTwoFailpoints } from './daemon-move-crash.js';

// Pass 2 of the move, the restarted daemon running from the copy, and the
// undo: the other half of the failpoints is in daemon-move-crash-pass-1.test.ts.
describeDaemonMoveCrash('pass 2 and the undo', passTwoFailpoints);
