export {
  countByState,
  countRowsByState,
  flushOwedAudit,
  ledgerPageOf,
  type LedgerDb,
  type LedgerTable,
} from "./queries";
export {
  betweenBatches,
  consoleStopping,
  finishLedgerJob,
  JobStop,
  pace,
  type LedgerJobContext,
} from "./run";
export { cancelLedgerJob, type LedgerJobStarter } from "./cancel";
export { ledgerPlanFields, type LedgerJobStart, startFailure, startLedgerJob } from "./start";
export {
  type LedgerJobList,
  ledgerQuerySchema,
  listLedgerJobPage,
  listLedgerJobs,
  loadLedgerJob,
  readLedger,
  withPlans,
} from "./views";
