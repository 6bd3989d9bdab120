/**
 * Where a scan's CPU profile (BENCH_CPU_PROF=dir npm run bench:triage-scan) spent its time, per letter:
 *   node bench/cpuprofile-summary.mjs dir/CPU.….cpuprofile [letters] [phase function names…]
 * Only the samples from the first under runScan to the last under runScan or refreshGroupSummary
 * count (module loading before the job is not the scan's; WINDOW=fn[,fn…] names other functions
 * that bound the window, e.g. WINDOW=mover for bench/redrive-mover.ts; WHOLE=1 takes every sample). Prints time
 * by top-level entry (idle, gc, program, event-loop callbacks), by innermost phase function, self
 * time by package or file and by function, and inclusive time by function. TREE=name[,depth]
 * prints the merged call tree under a function; CALLERS="name url:line" who called a frame.
 */
import { readFileSync } from "node:fs";
const [file, lettersArg, ...focus] = process.argv.slice(2);
const letters = Number(lettersArg || 30000);
const p = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map(); // node id -> µs
// The scan's window: from the first sample under runScan to the last one under refreshGroupSummary/runScan
// (BENCH's node figure is around worker.runOnce(); module loading before it is not the scan's).
const has = (id, name) => {
  for (let x = id; x !== undefined; x = parent.get(x)) if (byId.get(x).callFrame.functionName === name) return true;
  return false;
};
let lo = 0,
  hi = p.samples.length - 1;
// WINDOW=a,b: the window runs from the first sample under the first name to the last under any of them.
const WINDOW = (process.env.WINDOW ?? "runScan,refreshGroupSummary").split(",");
if (!process.env.WHOLE) {
  lo = p.samples.findIndex((id) => has(id, WINDOW[0]));
  for (let i = p.samples.length - 1; i >= 0; i--)
    if (WINDOW.some((w) => has(p.samples[i], w))) {
      hi = i;
      break;
    }
}
let wall = 0;
for (let i = lo + 1; i <= hi + 1 && i < p.timeDeltas.length; i++) wall += p.timeDeltas[i];
console.log(`window samples ${lo}..${hi} wall ${(wall / 1e6).toFixed(2)} s`);
for (let i = lo; i <= hi; i++) {
  const dt = p.timeDeltas[i + 1] ?? 0; // the time until the next sample belongs to this one
  self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + dt);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const short = (url) =>
  url
    .replace(/^file:\/\//, "")
    .replace(/.*\/node_modules\//, "nm:")
    .replace(`${process.cwd()}/`, "");
const fname = (n) => `${n.callFrame.functionName || "(anon)"} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const pkg = (n) => {
  const u = n.callFrame.url;
  if (!u) return n.callFrame.functionName.startsWith("(") ? n.callFrame.functionName : "(native/builtin)";
  if (u.startsWith("node:")) return u.split("/").slice(0, 2).join("/");
  const m = u.match(/node_modules\/((@[^/]+\/)?[^/]+)/);
  if (m) return `nm:${m[1]}`;
  return short(u).split("/").slice(0, 3).join("/");
};
const stack = (id) => {
  const s = [];
  for (let x = id; x !== undefined; x = parent.get(x)) s.push(byId.get(x));
  return s;
}; // leaf first
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
const selfFn = new Map(),
  selfPkg = new Map(),
  incl = new Map(),
  root = new Map(),
  phase = new Map();
const PHASES = focus.length
  ? focus
  : [
      "toIndexRow",
      "toLetter",
      "letterIdOf",
      "prepareLetters",
      "writeLetters",
      "checkpoint",
      "next",
      "onMessage",
      "stream",
      "runScan",
    ];
for (const [id, t] of self) {
  const s = stack(id);
  add(selfFn, fname(s[0]), t);
  add(selfPkg, pkg(s[0]), t);
  const seen = new Set();
  for (const n of s) {
    const k = fname(n);
    if (!seen.has(k)) {
      seen.add(k);
      add(incl, k, t);
    }
  }
  // top-level: the frame just under (root)
  const top = s[s.length - 2] ?? s[0];
  add(root, top ? fname(top) : "(root)", t);
  // phase: innermost phase frame on the stack
  const ph = s.find((n) => PHASES.includes(n.callFrame.functionName));
  add(phase, ph ? ph.callFrame.functionName : `~${pkg(s[0])}`, t);
}
const us = (t) => `${(t / letters).toFixed(1).padStart(7)} µs/l ${((100 * t) / total).toFixed(1).padStart(5)}%`;
const show = (title, m, n = 30) => {
  console.log(`\n== ${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${us(v)}  ${k}`);
};
console.log(`total ${(total / 1e6).toFixed(2)} s = ${(total / letters).toFixed(1)} µs per letter over ${letters}`);
show("by root (top-level entry)", root, 25);
show("by innermost phase", phase, 40);
show("self by package/file", selfPkg, 30);
show("self by function", selfFn, 50);
show("inclusive by function", incl, 70);
// TREE=name[,depth]: the call tree under every frame named `name`, merged by function, inclusive µs/letter.
if (process.env.TREE) {
  const [name, depthS] = process.env.TREE.split(",");
  const maxDepth = Number(depthS || 4);
  const tree = { t: 0, kids: new Map() };
  for (const [id, t] of self) {
    const s = stack(id).reverse(); // root first
    const i = s.findIndex((n) => n.callFrame.functionName === name);
    if (i < 0) continue;
    let node = tree;
    node.t += t;
    for (let d = i + 1; d < s.length && d <= i + maxDepth; d++) {
      const k = fname(s[d]);
      if (!node.kids.has(k)) node.kids.set(k, { t: 0, kids: new Map() });
      node = node.kids.get(k);
      node.t += t;
    }
  }
  const pr = (n, ind) => {
    for (const [k, c] of [...n.kids].sort((a, b) => b[1].t - a[1].t)) {
      if (c.t / letters < 0.3) continue;
      console.log(`${ind}${(c.t / letters).toFixed(1)}  ${k}`);
      pr(c, `${ind}  `);
    }
  };
  console.log(`\n== tree under ${name}: ${(tree.t / letters).toFixed(1)} µs/l`);
  pr(tree, "  ");
}
// CALLERS=name: self time of frames named `name` (url empty => builtin "(anon) :0" too), by their parent chain (3 up).
if (process.env.CALLERS) {
  const want = process.env.CALLERS;
  const m = new Map();
  for (const [id, t] of self) {
    const s = stack(id);
    if (fname(s[0]) !== want) continue;
    add(m, s.slice(1, 4).map(fname).join(" < "), t);
  }
  show(`callers of ${want}`, m, 25);
}
