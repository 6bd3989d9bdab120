import { toActionError } from "@/lib/errors";

/** Re-exported for the UI's use cases; the brand check in lib/errors.ts recognises AppErrors from any bundle layer. */
export { asAppError } from "@/lib/errors";

/** `toActionError` under the name the actions use. */
export const toSafeError = toActionError;
