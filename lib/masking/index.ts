export * from "./types";
export * from "./engine";
export { detect, luhnValid, ibanValid } from "./detectors";
export { DEFAULT_MASKING_RULES } from "./defaults";
