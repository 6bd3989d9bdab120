import { CopyButton } from "@/components/ui/copy-button";
import type { OperationView } from "@/lib/api/reference";
import styles from "./api-reference.module.css";
import { FieldTree } from "./field-tree";

/** One operation: what it does, what it takes, what it answers, and a curl line to try it from a shell. */
export function OperationCard({ op }: { op: OperationView }) {
  return (
    <article
      id={op.operationId}
      className={styles.operation}
      data-testid="api-operation"
      data-operation-id={op.operationId}
      data-path={op.path}
      data-method={op.method}
    >
      <h3 className={styles.opHead}>
        <span className={styles.method} data-method={op.method}>
          {op.method}
        </span>
        <code className={styles.path}>{op.path}</code>
        <span>{op.summary}</span>
        <span className={styles.opId}>{op.operationId}</span>
      </h3>
      {op.description ? <p className="hint">{op.description}</p> : null}
      <p className="small">
        {op.public ? (
          <span className="badge badge-ok">no token needed</span>
        ) : (
          <>
            <span className="badge badge-info">bearer token</span> <code>Authorization: Bearer dlqc_…</code>, a personal
            token (see Authentication)
          </>
        )}
      </p>

      {op.parameters.length ? (
        <div className={styles.part}>
          <h4>Parameters</h4>
          <div className="table-wrap">
            <table className="grid">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>In</th>
                  <th>Type</th>
                  <th>Required</th>
                  <th>Description</th>
                </tr>
              </thead>
              <tbody>
                {op.parameters.map((p) => (
                  <tr key={`${p.in}-${p.name}`} data-testid="api-parameter">
                    <td>
                      <code>{p.name}</code>
                    </td>
                    <td>{p.in}</td>
                    <td>
                      <code>{p.type}</code>
                      {p.enumValues ? (
                        <div className="small muted">
                          one of {p.enumValues.map((v) => JSON.stringify(v)).join(", ")}
                        </div>
                      ) : null}
                      {p.defaultValue !== null ? <div className="small muted">default {p.defaultValue}</div> : null}
                      {p.constraints.length ? <div className="small muted">{p.constraints.join(" · ")}</div> : null}
                    </td>
                    <td>{p.required ? "yes" : "no"}</td>
                    <td>{p.description ?? ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      ) : null}

      {op.requestBody ? (
        <div className={styles.part}>
          <h4>Request body{op.requestBody.required ? " (required)" : ""}</h4>
          {op.requestBody.content.map((c) => (
            <div key={c.mediaType}>
              <code className="small">{c.mediaType}</code>
              {c.schema ? <FieldTree node={c.schema} testId="api-request-body" /> : null}
            </div>
          ))}
        </div>
      ) : null}

      <div className={styles.part}>
        <h4>Responses</h4>
        {op.responses.map((r) => (
          <div key={r.status} className={styles.response} data-testid="api-response" data-status={r.status}>
            <span className={styles.status}>{r.status}</span>
            {r.description}
            {r.problem ? (
              <span className="small muted">
                {" "}
                · <code>application/problem+json</code>, the <a href="#errors">Problem</a> shape
              </span>
            ) : (
              r.content.map((c) => (
                <div key={c.mediaType} className={styles.part}>
                  <code className="small">{c.mediaType}</code>
                  {c.schema ? <FieldTree node={c.schema} /> : null}
                </div>
              ))
            )}
            {r.headers.map((h) => (
              <div key={h.name} className="small muted">
                Header <code>{h.name}</code> ({h.type}){h.description ? `: ${h.description}` : ""}
              </div>
            ))}
          </div>
        ))}
      </div>

      <div className={styles.part}>
        <div className={styles.curlHead}>
          <h4>How to call</h4>
          <CopyButton text={op.curl} label="Copy curl" testId="copy-curl" />
        </div>
        <pre className="block" data-testid="api-curl">
          {op.curl}
        </pre>
      </div>
    </article>
  );
}
