/**
 * Every v1 operation, registered by importing it: the document is complete whichever route loaded
 * first. One file per area; each exports its operations (defineOperation) and its shaping functions.
 */
export * from "./dlqs";
export * from "./audit";
export * from "./openapi";
export * from "./letters";
export * from "./scans";
export * from "./groups";
export * from "./redrives";
export * from "./discards";
export * from "./jobs";
export * from "./issues";
