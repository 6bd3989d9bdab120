import type { FieldNode } from "@/lib/api/reference";
import styles from "./api-reference.module.css";

/** What a field holds and its limits, in one line beside its name. */
function FieldLine({ node }: { node: FieldNode }) {
  const notes = [
    node.required ? "required" : node.name !== null ? "optional" : null,
    node.nullable ? "nullable" : null,
    node.format,
    node.enumValues ? `one of ${node.enumValues.map((v) => JSON.stringify(v)).join(", ")}` : null,
    node.defaultValue !== null ? `default ${node.defaultValue}` : null,
    ...node.constraints,
    node.circular ? "as above" : null,
  ].filter(Boolean);
  return (
    <>
      {node.name !== null ? <span className={styles.fieldName}>{node.name}</span> : null}{" "}
      <span className={styles.fieldType}>{node.type}</span>
      {notes.length ? <span className={styles.fieldNote}> · {notes.join(" · ")}</span> : null}
      {node.description ? <span className={styles.fieldDesc}> — {node.description}</span> : null}
    </>
  );
}

function FieldItems({ nodes }: { nodes: FieldNode[] }) {
  return (
    <ul>
      {nodes.map((c, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the tree is static and a name can be null (array items) or repeat (allOf parts); the position tells siblings apart
        <li key={`${c.name}-${i}`}>
          <FieldLine node={c} />
          {c.children.length ? <FieldItems nodes={c.children} /> : null}
        </li>
      ))}
    </ul>
  );
}

/** A schema as a tree of fields ($refs already resolved by lib/api/reference.ts). */
export function FieldTree({ node, testId }: { node: FieldNode; testId?: string }) {
  return (
    <ul className={styles.tree} data-testid={testId}>
      <li>
        <FieldLine node={node} />
        {node.children.length ? <FieldItems nodes={node.children} /> : null}
      </li>
    </ul>
  );
}
