/**
 * Characters that change how text reads without being seen: bidirectional controls (an RTL
 * override turns `invoice-\u202Egpj.exe` into what looks like `invoice-exe.jpg`) and invisible
 * characters (zero-width spaces and joiners, word joiner, BOM, soft hyphen, tag characters, Hangul
 * fillers). The console shows letters literally, so it marks these where they stand, the way code
 * hosts do (`invoice-⟨U+202E⟩gpj.exe`), instead of hiding or dropping them: an operator comparing a
 * header with what a consumer logged must know when two strings that look equal are not.
 */
const NAMES = new Map<number, string>([
  [0x00ad, "SOFT HYPHEN"],
  [0x034f, "COMBINING GRAPHEME JOINER"],
  [0x061c, "ARABIC LETTER MARK"],
  [0x115f, "HANGUL CHOSEONG FILLER"],
  [0x1160, "HANGUL JUNGSEONG FILLER"],
  [0x17b4, "KHMER VOWEL INHERENT AQ"],
  [0x17b5, "KHMER VOWEL INHERENT AA"],
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
  [0x2061, "FUNCTION APPLICATION"],
  [0x2062, "INVISIBLE TIMES"],
  [0x2063, "INVISIBLE SEPARATOR"],
  [0x2064, "INVISIBLE PLUS"],
  [0x2066, "LEFT-TO-RIGHT ISOLATE"],
  [0x2067, "RIGHT-TO-LEFT ISOLATE"],
  [0x2068, "FIRST STRONG ISOLATE"],
  [0x2069, "POP DIRECTIONAL ISOLATE"],
  [0x3164, "HANGUL FILLER"],
  [0xfeff, "ZERO WIDTH NO-BREAK SPACE (BOM)"],
  [0xffa0, "HALFWIDTH HANGUL FILLER"],
  [0xfff9, "INTERLINEAR ANNOTATION ANCHOR"],
  [0xfffa, "INTERLINEAR ANNOTATION SEPARATOR"],
  [0xfffb, "INTERLINEAR ANNOTATION TERMINATOR"],
]);

const PICTOGRAPH = /\p{Extended_Pictographic}\uFE0F?$|\p{Emoji_Modifier}$/u;
const PATTERN =
  /\u034F|[\u00AD\u061C\u115F\u1160\u17B4\u17B5\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\u3164\uFEFF\uFFA0\uFFF9-\uFFFB\u{E0000}-\u{E007F}]/gu;
/** A black flag followed by tag characters is a subdivision flag (🏴 England), not hidden text. */
const TAG_FLAG = /\u{1F3F4}[\u{E0020}-\u{E007E}]*$/u;

/** Whether the character is a direction control (the spoofing kind). */
export function isBidiControl(cp: number): boolean {
  return (
    cp === 0x061c || (cp >= 0x200e && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)
  );
}

/** "U+202E", "U+E0041". */
export function codePointLabel(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** The Unicode name of a hidden character ("TAG LATIN SMALL LETTER A" style for tags). */
export function hiddenCharName(cp: number): string {
  if (cp >= 0xe0000 && cp <= 0xe007f) {
    if (cp === 0xe0001) return "LANGUAGE TAG";
    if (cp === 0xe007f) return "CANCEL TAG";
    const c = cp - 0xe0000;
    return c >= 0x20 && c < 0x7f ? `TAG ${JSON.stringify(String.fromCharCode(c))}` : "TAG";
  }
  return NAMES.get(cp) ?? "INVISIBLE CHARACTER";
}

/** Each hidden character of `s` (not the joiners of emoji sequences, nor a flag's tags), in order. */
function* hiddenMatches(s: string): Generator<{ index: number; cp: number; length: number }> {
  for (const m of s.matchAll(PATTERN)) {
    const cp = m[0].codePointAt(0)!;
    const at = m.index!;
    // A zero-width joiner inside an emoji sequence (👩‍💻) is how the emoji is written, not hidden text.
    if (cp === 0x200d && at > 0 && PICTOGRAPH.test(s.slice(Math.max(0, at - 2), at))) continue;
    if (cp >= 0xe0000 && TAG_FLAG.test(s.slice(Math.max(0, at - 64), at))) continue;
    yield { index: at, cp, length: m[0].length };
  }
}

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
  return hiddenCharsIn([text], limit);
}

/** As hiddenChars, over several texts together (a whole letter), `limit` characters each. */
export function hiddenCharsIn(texts: Iterable<string>, limit = 1_000_000): HiddenChars | null {
  const seen = new Map<number, number>();
  let count = 0;
  let bidi = 0;
  for (const text of texts) {
    const s = text.length > limit ? text.slice(0, limit) : text;
    for (const { cp } of hiddenMatches(s)) {
      seen.set(cp, (seen.get(cp) ?? 0) + 1);
      count++;
      if (isBidiControl(cp)) bidi++;
    }
  }
  if (count === 0) return null;
  const summary = [...seen].map(([cp, n]) => `${codePointLabel(cp)} ${hiddenCharName(cp)}${n > 1 ? ` ×${n}` : ""}`);
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

/** The letter banner's sentence: "This letter contains 2 direction-control characters and 1 invisible character, shown as ⟨U+…⟩." */
export function hiddenCharsSentence(h: HiddenChars): string {
  const parts: string[] = [];
  const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
  if (h.bidi > 0) parts.push(plural(h.bidi, "direction-control character"));
  if (h.count > h.bidi) parts.push(plural(h.count - h.bidi, "invisible character"));
  return `This letter contains ${parts.join(" and ")}, shown as ⟨U+…⟩ where they stand.`;
}

/** A run of text, or one hidden character to show as a marker. */
export type TextSegment = string | { char: string; cp: number; label: string; name: string; bidi: boolean };

/**
 * The text cut into plain runs and hidden characters. At most `maxMarkers` markers: past them the
 * rest is one run (a payload of a million joiners must not become a million elements) and
 * `unmarked` is true.
 */
export function hiddenCharSegments(text: string, maxMarkers = 5_000): { segments: TextSegment[]; unmarked: boolean } {
  const segments: TextSegment[] = [];
  let at = 0;
  let markers = 0;
  for (const m of hiddenMatches(text)) {
    if (markers === maxMarkers) {
      segments.push(text.slice(at));
      return { segments, unmarked: true };
    }
    if (m.index > at) segments.push(text.slice(at, m.index));
    segments.push({
      char: text.slice(m.index, m.index + m.length),
      cp: m.cp,
      label: codePointLabel(m.cp),
      name: hiddenCharName(m.cp),
      bidi: isBidiControl(m.cp),
    });
    markers++;
    at = m.index + m.length;
  }
  if (at < text.length || segments.length === 0) segments.push(text.slice(at));
  return { segments, unmarked: false };
}
