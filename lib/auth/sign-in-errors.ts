/**
 * Error codes the sign-in endpoints put in `?error=` and what the sign-in page says for them.
 * Shared by the server (lib/auth/options.ts) and the sign-in form; no secrets, no server imports.
 */
export const RATE_LIMITED_ERROR = "RateLimited";

export function signInErrorMessage(code: string | null | undefined): string | null {
  if (!code) return null;
  const limited = new RegExp(`^${RATE_LIMITED_ERROR}:(\\d+)$`).exec(code);
  if (limited) {
    const n = Number(limited[1]);
    return `Too many attempts; try again in ${n} minute${n === 1 ? "" : "s"}.`;
  }
  switch (code) {
    case "CredentialsSignin":
      return "Wrong email or password.";
    case "NoRole":
      return "Your account is not in any group that gives access to the console. Ask an admin.";
    case "AccessDenied":
      return "Sign-in was refused. Ask an admin if you need access.";
    case "OAuthSignin":
    case "OAuthCallback":
    case "Callback":
    case "OAuthCreateAccount":
      return "Single sign-on did not complete. Try again, or ask an admin to check the identity provider settings.";
    case "SessionRequired":
      return null;
    default:
      return "Sign-in failed. Try again in a moment.";
  }
}
