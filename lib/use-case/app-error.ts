import { asAppError } from "@/lib/errors";

/**
 * For pages: the loader's value, or the operator message of the AppError it threw (a page shows
 * it as a problem); anything else is rethrown to the error boundary.
 */
export async function loadOrProblem<T>(
  load: () => Promise<T>,
): Promise<{ value: T; problem: null } | { value: null; problem: string }> {
  try {
    return { value: await load(), problem: null };
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return { value: null, problem: err.userMessage };
  }
}
