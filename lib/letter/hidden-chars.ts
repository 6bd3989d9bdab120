/**
 * Characters that change how text reads without being seen: bidirectional controls (an RTL
 * override turns `invoice-\u202Egpj.exe` into what looks like `invoice-exe.jpg`) and invisible
 * characters (zero-width spaces and joiners, word joiner, BOM, soft hyphen). The console shows
 * letters literally, so it names these instead of hiding or dropping them: an operator comparing a
 * header with what a consumer logged must know when two strings that look equal are not.
 */
const NAMES = new Map<number, string>([
  [0x061c, "ARABIC LETTER MARK"],
  [0x00ad, "SOFT HYPHEN"],
  [0x180e, "MONGOLIAN VOWEL SEPARATOR"],
  [0x200b, "ZERO WIDTH SPACE"],
  [0x200c, "ZERO WIDTH NON-JOINER"],
  [0x200d, "ZERO WIDTH JOINER"],
  [0x200e, "LEFT-TO-RIGHT MARK"],
  [0x200f, "RIGHT-TO-LEFT MARK"],
  [0x202a, "LEFT-TO-RIGHT EMBEDDING"],
  [0x202b, "RIGHT-TO-LEFT EMBEDDING"],
  [0x202c, "POP DIRECTIONAL FORMATTING"],
  [0x202d, "LEFT-TO-RIGHT OVERRIDE"],
  [0x202e, "RIGHT-TO-LEFT OVERRIDE"],
  [0x2060, "WORD JOINER"],
  [0x2066, "LEFT-TO-RIGHT ISOLATE"],
  [0x2067, "RIGHT-TO-LEFT ISOLATE"],
  [0x2068, "FIRST STRONG ISOLATE"],
  [0x2069, "POP DIRECTIONAL ISOLATE"],
  [0xfeff, "ZERO WIDTH NO-BREAK SPACE (BOM)"],
]);

const PICTOGRAPH = /\p{Extended_Pictographic}\uFE0F?$|\p{Emoji_Modifier}$/u;
const PATTERN = /[\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/g;

export interface HiddenChars {
  /** How many such characters the text holds. */
  count: number;
  /** Bidirectional controls among them (the spoofing kind). */
  bidi: number;
  /** One line per distinct character, e.g. "U+202E RIGHT-TO-LEFT OVERRIDE ×2". */
  summary: string[];
}

/** Null when the text holds none. Scans at most `limit` characters (a payload can be megabytes). */
export function hiddenChars(text: string, limit = 1_000_000): HiddenChars | null {
  const s = text.length > limit ? text.slice(0, limit) : text;
  const seen = new Map<number, number>();
  let count = 0;
  let bidi = 0;
  for (const m of s.matchAll(PATTERN)) {
    const cp = m[0].codePointAt(0)!;
    // A zero-width joiner inside an emoji sequence (👩‍💻) is how the emoji is written, not hidden text.
    if (cp === 0x200d && m.index! > 0 && PICTOGRAPH.test(s.slice(Math.max(0, m.index! - 2), m.index!))) continue;
    seen.set(cp, (seen.get(cp) ?? 0) + 1);
    count++;
    if (
      cp === 0x061c ||
      (cp >= 0x200e && cp <= 0x200f) ||
      (cp >= 0x202a && cp <= 0x202e) ||
      (cp >= 0x2066 && cp <= 0x2069)
    )
      bidi++;
  }
  if (count === 0) return null;
  const summary = [...seen].map(
    ([cp, n]) => `U+${cp.toString(16).toUpperCase().padStart(4, "0")} ${NAMES.get(cp)}${n > 1 ? ` ×${n}` : ""}`,
  );
  return { count, bidi, summary };
}

/** The badge's words: short, with the details for a tooltip. */
export function hiddenCharsLabel(h: HiddenChars): { label: string; title: string } {
  const label = h.bidi > 0 ? "direction controls" : "invisible characters";
  return {
    label,
    title: `Shown as received, but this text holds ${h.count} character${h.count === 1 ? "" : "s"} you cannot see: ${h.summary.join(", ")}. What it looks like may not be what it is.`,
  };
}
