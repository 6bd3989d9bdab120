/** The pure triage core: message and stack normalisation, grouping keys, classification, bursts. */
export {
  normalizeMessage,
  topStackFrame,
  exceptionClassFromStack,
  rootCauseOf,
  parseStack,
  MAX_MESSAGE_LENGTH,
} from "./normalize";
export type { ParsedStack, ParsedFrame, StackLanguage } from "./normalize";
export { groupKeyOf, receiveCountBucket, GROUPING_VERSION } from "./grouping";
export type { GroupingInput, GroupKey } from "./grouping";
export { classify, validateRule, validateRules, DEFAULT_CLASSIFICATION_RULES } from "./classify";
export type { ClassificationRule, Disposition } from "./classify";
export { detectBurst, bucketize } from "./burst";
export type { BurstOptions, BurstResult } from "./burst";
