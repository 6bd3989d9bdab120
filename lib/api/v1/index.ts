/** Every v1 operation, registered by importing it: the document is complete whichever route loaded first. */
export { listDlqsOperation, toDlqList } from "./dlqs";
export { listAuditOperation, auditFilterOf, auditQuerySchema, toAuditPage } from "./audit";
export { openApiOperation } from "./openapi";
