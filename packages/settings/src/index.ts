export {
  type IssueParams,
  type LoadedSettings,
  MAX_TIMER_SECS,
  type SettingDescriptor,
  type SettingOptions,
  type SettingValue,
  type SettingsLoader,
  type SettingsLoaderOptions,
  type ValueType,
  bool,
  decimal,
  fail,
  oneOf,
  optional,
  setting,
  settingsLoader,
  text,
  timerSecs,
  urlList,
  wholeNumber,
  word,
} from './settings.js';
export { type CheckedKeyPair, type ParsedCertificates, checkKeyPair, parsePemCertificates } from './pem.js';
export { LOG_FORMATS, type LogFormat, logFormat, resolveLogFormat } from './log-format.js';
export {
  type EtcdConfig,
  type EtcdSettingValues,
  type EtcdSettingsOptions,
  LOG_LEVELS,
  type LogLevel,
  checkEtcdSettings,
  etcdConfig,
  etcdSettings,
  logSettings,
} from './shared-settings.js';
export {
  EXIT,
  EXIT_CODES_LINE,
  HELP_ENTRY,
  type HelpEntry,
  type HelpPage,
  type HelpSection,
  VERSION_ENTRY,
  formatHelp,
  versionText,
} from './help.js';
export { type LoadResult } from './load-result.js';
export { stripLeadingDashDash } from './argv.js';
export { stdoutIsTty } from './terminal.js';
export { type StopSignal, type StopSignalsOptions, handleStopSignals } from './signals.js';
export { type ShutdownServer, type ShutdownSteps, shutDown } from './shutdown.js';
export {
  type ServerTlsConfig,
  type ServerTlsPrefix,
  type ServerTlsSettingName,
  checkServerTlsSettings,
  serverTlsConfig,
  serverTlsSettings,
} from './server-tls-settings.js';
