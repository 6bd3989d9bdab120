import type { Metadata } from "next";
import type { ReactNode } from "react";
import { cookies } from "next/headers";
import { Providers } from "@/components/providers";
import { SiteHeader } from "@/components/layout/site-header";
import type { ThemeChoice } from "@/components/ui/theme-toggle";
import { getActor } from "@/lib/auth/session";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "DLQ Console", template: "%s · DLQ Console" },
  description: "Triage dead-lettered messages",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  const raw = (await cookies()).get("theme")?.value;
  const theme: ThemeChoice = raw === "light" || raw === "dark" ? raw : "system";
  const actor = await getActor();
  return (
    <html lang="en" data-theme={theme === "system" ? undefined : theme}>
      <body>
        <Providers>
          {actor ? <SiteHeader actor={actor} theme={theme} /> : null}
          {children}
        </Providers>
      </body>
    </html>
  );
}
