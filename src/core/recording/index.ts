export { ActionLogEntrySchema, MAX_LOG_ENTRIES, type ActionLogEntry } from './log.js';
export { SessionRecording, notRecorded, traceOptions, type StepInfo } from './recording.js';
export { SessionSecrets } from './secrets.js';
export { RetainedRecordings } from './store.js';
export { TraceRecorder, type TraceOptions } from './trace.js';
export { readZip, writeZip, type ZipEntry } from './zip.js';
export { MAX_RUN_STEPS, MAX_STEP_SELECTOR, PASSWORD_PLACEHOLDER, RunStep, RunSteps, runText, targetWords } from './steps.js';
