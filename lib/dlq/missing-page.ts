/**
 * What a 404 page says, from the address asked for: the kind of thing that does not exist and its
 * name, so that an operator who followed a pasted link reads "There is no DLQ orders.DLQ on
 * local-rabbit" rather than a generic "nothing here". Pure: the not-found page calls it with the
 * pathname (its only input; Next gives a not-found page no props).
 */
export interface MissingWords {
  title: string;
  body: string;
  back: { href: string; label: string };
}

const dec = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

export function missingWords(pathname: string): MissingWords {
  const parts = pathname.split("?")[0]!.split("/").filter(Boolean).map(dec);
  const [root, a, b, c, d] = parts;
  if (root === "dlqs" && a && b) {
    const dlq = `/dlqs/${encodeURIComponent(a)}/${encodeURIComponent(b)}`;
    if (c === "letters" && d)
      return {
        title: `No such letter: ${d}`,
        body: `The console has never seen a letter with this id in ${b}: it is not in the DLQ now, and no scan, redrive, discard, archive or audit record names it. Check the id; a letter's id is in its DLQ's list.`,
        back: { href: dlq, label: "← The DLQ" },
      };
    if ((c === "redrive" || c === "discard") && d)
      return {
        title: `There is no such ${c}: ${d}`,
        body: `No ${c} with this id was ever started on ${b}.`,
        back: { href: `${dlq}/${c}`, label: `← All ${c}s of this DLQ` },
      };
    return {
      title: `The DLQ "${b}" does not exist on ${a}.`,
      body: "The broker does not have it (or the console has no such connection): it may have been deleted or renamed, or the link is from another console. If the config file names it, fix or remove the entry there.",
      back: { href: "/", label: "← All DLQs" },
    };
  }
  if (root === "archive" && a)
    return {
      title: `There is no archived letter ${a}.`,
      body: "Nothing was archived under this id.",
      back: { href: "/archive", label: "← The archive" },
    };
  if (root === "alerts" && a)
    return {
      title: "There is no such alert rule.",
      body: "It may have been deleted.",
      back: { href: "/alerts", label: "← Alert rules" },
    };
  if (root === "groups" && a)
    return {
      title: b ? `There is no consumer group "${b}" on ${a}.` : `There is no connection "${a}" with consumer groups.`,
      body: "The console samples consumer groups every round; a group with no members and no committed offsets is not listed.",
      back: { href: "/groups", label: "← Consumer groups" },
    };
  return {
    title: "Nothing here.",
    body: "This address does not match a page of the console. If someone pasted it, the DLQ or letter may have a different name now.",
    back: { href: "/", label: "← All DLQs" },
  };
}
