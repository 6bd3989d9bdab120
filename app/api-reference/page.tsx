/*
 * The API reference, rendered here with server components from the same OpenAPI document that
 * /api/v1/openapi.json serves (openApiDocument + every lib/api/v1 operation), so it cannot drift.
 * It ships no script of its own but the copy buttons and never asks for a token. Why not a
 * renderer from npm: docs/decisions/0003-api-reference-on-the-server.md.
 */
import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { FieldTree } from "@/components/api-reference/field-tree";
import { OperationCard } from "@/components/api-reference/operation-card";
import styles from "@/components/api-reference/api-reference.module.css";
import { referenceView, type OpenApiDoc, BASE_PLACEHOLDER, TOKEN_PLACEHOLDER } from "@/lib/api/reference";
import { openApiDocument } from "@/lib/api/registry";
import "@/lib/api/v1";
import { authorizePage } from "@/lib/auth/authorize-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";

export const metadata: Metadata = { title: "API reference" };
export const dynamic = "force-dynamic";

/**
 * Every /api/v1 operation by tag. It shows the document only, no data, so every signed-in role may
 * read it; it is checked under tokens:own (every role) because it is the companion of the token
 * page: whoever may make a token may learn what it can call.
 */
export default async function ApiReferencePage() {
  const actor = await requirePageActor("/api-reference");
  await authorizePage(actor, "tokens:own", { action: "api.reference", meta: await requestMeta() });
  const view = referenceView(openApiDocument({ version: "1" }) as unknown as OpenApiDoc);
  return (
    <main className="page">
      <div className="page-head">
        <h1>API reference</h1>
        <span className="meta">
          {view.title} · version {view.version} · OpenAPI 3.1:{" "}
          <a href="/api/v1/openapi.json" data-testid="openapi-link">
            /api/v1/openapi.json
          </a>
        </span>
      </div>
      <div className={styles.layout}>
        <nav className={styles.toc} aria-label="Operations">
          <ul>
            <li>
              <a href="#authentication">Authentication</a>
            </li>
            <li>
              <a href="#errors">Errors</a>
            </li>
          </ul>
          {view.tags.map((t) => (
            <div key={t.name}>
              <h3>{t.name}</h3>
              <ul>
                {t.operations.map((o) => (
                  <li key={o.operationId}>
                    <a href={`#${o.operationId}`}>
                      <code>{o.method}</code> {o.summary}
                    </a>
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </nav>
        <div>
          {view.description ? <p className="hint">{view.description}</p> : null}
          <section className="section" id="authentication" aria-labelledby="auth-h" data-testid="api-auth">
            <h2 id="auth-h">Authentication</h2>
            {view.auth.map((a) => (
              <p key={a.name}>
                <strong>{a.name}</strong>: HTTP {a.scheme ?? a.type}. {a.description}
              </p>
            ))}
            <p className="hint">
              Send <code>Authorization: Bearer &lt;token&gt;</code> with every call. Make a token on your{" "}
              <Link href="/profile">profile page</Link>; it acts as you, with the role you gave it and never above your
              role at the time of the call, and every call is in the audit log under your name and the token. Cookies
              are never read by these routes: a signed-in browser cannot call them. Over the token&apos;s rate limit a
              call gets 429 with <code>Retry-After</code>.
            </p>
            <p className="hint">
              The examples read the token and the console&apos;s address from your shell, so neither is pasted into a
              page or a command history:
            </p>
            <pre className="block">{`export ${BASE_PLACEHOLDER.slice(1)}=<this console's address, e.g. https://dlq.example.com>\nread -rs ${TOKEN_PLACEHOLDER.slice(1)} && export ${TOKEN_PLACEHOLDER.slice(1)}   # paste the dlqc_… token, Enter`}</pre>
          </section>
          <section className="section" id="errors" aria-labelledby="errors-h" data-testid="api-errors">
            <h2 id="errors-h">Errors</h2>
            <p className="hint">
              Every error is problem details (RFC 9457), <code>application/problem+json</code>. <code>detail</code> says
              what happened in words meant for people; <code>code</code> is stable for scripts; <code>instance</code> is
              the request id to quote when asking the console&apos;s owners. A 401 carries{" "}
              <code>WWW-Authenticate: Bearer</code>.
            </p>
            {view.problem ? <FieldTree node={view.problem} testId="api-problem" /> : null}
          </section>
          {view.tags.map((t) => (
            <section
              key={t.name}
              className="section"
              aria-labelledby={`tag-${t.name}`}
              data-testid="api-tag"
              data-tag={t.name}
            >
              <h2 id={`tag-${t.name}`}>{t.name}</h2>
              {t.operations.map((o) => (
                <OperationCard key={o.operationId} op={o} />
              ))}
            </section>
          ))}
        </div>
      </div>
    </main>
  );
}
