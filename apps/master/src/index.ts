// The master's settings, for the checks of the files that document them (tests/deploy); the
// `maintd` binary starts from main.ts.
export { loadConfig, settings } from './settings.js';
