import Link from "@/components/ui/link";
import { SignOutButton } from "@/components/auth/sign-out-button";
import { ThemeToggle, type ThemeChoice } from "@/components/ui/theme-toggle";
import { can } from "@/lib/auth/permissions";
import type { Actor } from "@/lib/auth/session";
import { NavLinks } from "./nav-links";
import { SiteMenu } from "./site-menu";

/**
 * One row on a laptop; on a narrower screen the links and the account controls fold into a menu
 * (globals.css, "Header"). Every control is rendered once, so the same element serves both layouts.
 */
export function SiteHeader({ actor, theme }: { actor: Actor; theme: ThemeChoice }) {
  const links = [{ href: "/", label: "DLQs", testId: "nav-dlqs" }];
  if (can(actor.role, "triage:read")) links.push({ href: "/failures", label: "Failures", testId: "nav-failures" });
  if (can(actor.role, "ops:read")) {
    links.push({ href: "/findings", label: "Findings", testId: "nav-findings" });
    links.push({ href: "/alerts", label: "Alerts", testId: "nav-alerts" });
    links.push({ href: "/owners", label: "Owners", testId: "nav-owners" });
  }
  if (can(actor.role, "groups:read")) links.push({ href: "/groups", label: "Groups", testId: "nav-groups" });
  if (can(actor.role, "redrive:read")) links.push({ href: "/redrives", label: "Redrives", testId: "nav-redrives" });
  if (can(actor.role, "discard:read")) links.push({ href: "/discards", label: "Discards", testId: "nav-discards" });
  if (can(actor.role, "archive:read")) links.push({ href: "/archive", label: "Archive", testId: "nav-archive" });
  if (can(actor.role, "audit:read")) links.push({ href: "/audit", label: "Audit", testId: "nav-audit" });
  if (can(actor.role, "users:manage")) links.push({ href: "/admin/users", label: "Users", testId: "nav-users" });
  if (can(actor.role, "triage:rules"))
    links.push({ href: "/admin/triage-rules", label: "Triage rules", testId: "nav-triage-rules" });
  if (can(actor.role, "masking:manage"))
    links.push({ href: "/admin/masking", label: "Masking", testId: "nav-masking" });
  return (
    <header className="site-header">
      <Link href="/" className="brand">
        DLQ Console
      </Link>
      <SiteMenu>
        <NavLinks links={links} />
        <div className="site-account">
          {/* Who is signed in is the way to their profile (and API tokens), as on most consoles. */}
          <Link
            href="/profile"
            className="btn btn-quiet account-link"
            data-testid="nav-profile"
            title={`${actor.email}: your profile and API tokens`}
          >
            <span className="sr-only">Profile of </span>
            <span className="current-user" data-testid="current-user">
              <strong>{actor.name ?? actor.email}</strong> · <span data-testid="current-role">{actor.role}</span>
            </span>
          </Link>
          <ThemeToggle initial={theme} />
          {/* Every role may read the API reference (it shows the document, no data); beside Profile, where tokens are made. */}
          <Link
            href="/api-reference"
            className="btn btn-quiet"
            data-testid="nav-api-reference"
            title="API reference (/api/v1)"
          >
            API
          </Link>
          <SignOutButton />
        </div>
      </SiteMenu>
    </header>
  );
}
