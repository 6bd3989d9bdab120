import type { Metadata } from "next";
import type { ReactNode } from "react";
import { cookies, headers } from "next/headers";
import { Providers } from "@/components/providers";
import { ShortcutsScript } from "@/components/layout/shortcuts-script";
import { SiteHeader } from "@/components/layout/site-header";
import type { ThemeChoice } from "@/components/ui/theme-toggle";
import { getActor } from "@/lib/auth/session";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "DLQ Console", template: "%s · DLQ Console" },
  description: "Triage dead-lettered messages",
};

/** proxy.ts puts the response's Content-Security-Policy on the request too; its nonce lets our inline script run. */
async function cspNonce(): Promise<string | undefined> {
  const csp = (await headers()).get("content-security-policy") ?? "";
  return /'nonce-([^']+)'/.exec(csp)?.[1];
}

export default async function RootLayout({ children }: { children: ReactNode }) {
  const raw = (await cookies()).get("theme")?.value;
  const theme: ThemeChoice = raw === "light" || raw === "dark" ? raw : "system";
  const [actor, nonce] = await Promise.all([getActor(), cspNonce()]);
  return (
    <html lang="en" data-theme={theme === "system" ? undefined : theme}>
      <head>
        <ShortcutsScript nonce={nonce} />
      </head>
      <body>
        <Providers>
          {actor ? <SiteHeader actor={actor} theme={theme} /> : null}
          {children}
        </Providers>
      </body>
    </html>
  );
}
