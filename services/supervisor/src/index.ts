export { runSupervisor } from './main.js';
export type { SupervisorOptions } from './main.js';
