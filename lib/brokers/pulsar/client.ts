/**
 * The console's two ways into Pulsar: its admin REST API (topics, stats, cursors, policies) and its
 * WebSocket API (reader, producer, consumer), both on the broker's web service port. Every failure
 * becomes a typed BrokerError worded for the operator.
 */
import WebSocket from "ws";
import { BrokerError } from "@/lib/brokers/contract/errors";

export interface PulsarEndpoint {
  connectionId: string;
  adminUrl: string;
  serviceUrl: string;
  token: string | undefined;
  timeoutMs: number;
}

/** "tenant/namespace/topic" ⇄ "persistent://tenant/namespace/topic". */
export interface TopicName {
  tenant: string;
  namespace: string;
  topic: string;
}

export function parseTopicName(name: string): TopicName | null {
  const bare = name.replace(/^persistent:\/\//, "");
  const parts = bare.split("/");
  if (parts.length !== 3 || parts.some((p) => p === "" || p === "." || p === "..")) return null;
  return { tenant: parts[0], namespace: parts[1], topic: parts[2] };
}

export const topicPath = (t: TopicName) =>
  `${encodeURIComponent(t.tenant)}/${encodeURIComponent(t.namespace)}/${encodeURIComponent(t.topic)}`;
export const shortName = (t: TopicName) => `${t.tenant}/${t.namespace}/${t.topic}`;

/** A topic as a DLQ name: "tenant/namespace/topic"; throws `not_found` for a name that is not one. */
export function topicOf(name: string): TopicName {
  const t = parseTopicName(name);
  if (!t)
    throw new BrokerError("not_found", {
      userMessage: `"${name}" is not a Pulsar topic name: DLQ topics are written tenant/namespace/topic.`,
    });
  return t;
}

const NETWORK =
  /ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|ECONNRESET|EAI_AGAIN|socket hang up|fetch failed|aborted|timeout/i;

function unreachable(ep: PulsarEndpoint, cause: unknown): BrokerError {
  return new BrokerError("unreachable", {
    message: String((cause as Error)?.message ?? cause),
    cause,
    userMessage: `Pulsar at ${ep.adminUrl} did not answer. Check that the broker is running and reachable from the console, then retry.`,
  });
}

function reasonOf(body: string): string {
  try {
    const j = JSON.parse(body) as { reason?: unknown; message?: unknown };
    const r = typeof j.reason === "string" ? j.reason : typeof j.message === "string" ? j.message : null;
    if (r) return r.slice(0, 300);
  } catch {
    /* not JSON */
  }
  // An HTML error page (the WebSocket handshake's) carries the reason in its title.
  const title = /<title>([^<]*)<\/title>/i.exec(body)?.[1];
  const text = (title ?? body)
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
  return text.slice(0, 300);
}

/** Refusals that stay until someone changes the topic: [what Pulsar's exception says, the operator's words]. */
const LASTING_REFUSALS: Array<[RegExp, string]> = [
  [/TopicTerminated|already terminated/i, "the topic was terminated (it takes no more messages)"],
  [/TopicFenced|fenced/i, "the topic is fenced (being deleted or moved)"],
  [/NotAllowed|not allowed/i, "the topic or namespace does not allow it"],
  [/IncompatibleSchema/i, "the topic's schema does not accept these bytes"],
  [/ProducerBlockedQuotaExceeded|QuotaExceeded/i, "the topic's backlog quota is full"],
];

/** The `errorMsg` inside a WebSocket handshake's error page, else the text itself. */
function errorMsgOf(reason: string): string {
  const m = /"errorMsg"\s*:\s*"([^"]*)"/.exec(reason);
  return (m ? m[1] : reason).replace(/^[\w.$]+Exception\$?\w*:\s*/, "").slice(0, 200);
}

/** An HTTP status from Pulsar (admin call or WebSocket handshake) as a BrokerError. */
export function statusError(ep: PulsarEndpoint, status: number, body: string, what: string): BrokerError {
  const reason = reasonOf(body);
  const message = `${what}: HTTP ${status} ${reason}`;
  if (status === 401 || status === 403) {
    return new BrokerError("auth", {
      message,
      userMessage: `Pulsar at ${ep.adminUrl} refused the console (${status === 401 ? "not authenticated" : "not authorized"}) to ${what}. Check the token named by connection "${ep.connectionId}" and the role's permissions (produce, consume and admin on the DLQ namespaces).`,
    });
  }
  if (status === 404)
    return new BrokerError("not_found", { message, userMessage: `Pulsar says: ${reason || "not found"} (${what}).` });
  // A refusal that retrying will not change, whatever the status (a terminated topic's producer handshake answers 503).
  const lasting = LASTING_REFUSALS.find(([re]) => re.test(reason));
  if (lasting)
    return new BrokerError("bad_request", {
      message,
      userMessage: `Pulsar refused to ${what}: ${lasting[1]} (${errorMsgOf(reason)}).`,
    });
  if (status === 429 || status === 503)
    return new BrokerError("throttled", {
      message,
      userMessage: `Pulsar at ${ep.adminUrl} is busy (${status}${reason ? `: ${errorMsgOf(reason)}` : ""}) and did not ${what}. Retry in a moment.`,
    });
  if (status >= 400 && status < 500)
    return new BrokerError("bad_request", {
      message,
      userMessage: `Pulsar refused to ${what}: ${reason || `HTTP ${status}`}.`,
    });
  return new BrokerError("protocol", {
    message,
    userMessage: `Pulsar at ${ep.adminUrl} failed to ${what} (HTTP ${status}${reason ? `: ${reason}` : ""}). Retry; if it persists, check the broker logs.`,
  });
}

/** The admin REST API. */
export class PulsarAdmin {
  /** Requests made (for `inspect`'s call count). */
  calls = 0;
  constructor(readonly ep: PulsarEndpoint) {}

  private headers(json: boolean): Record<string, string> {
    const h: Record<string, string> = { accept: "application/json" };
    if (json) h["content-type"] = "application/json";
    if (this.ep.token) h.authorization = `Bearer ${this.ep.token}`;
    return h;
  }

  /** Parsed JSON (null for an empty answer), or a BrokerError; `notFound: null` turns a 404 into null. */
  async request<T>(
    method: string,
    path: string,
    what: string,
    opts: { body?: unknown; notFound?: "null"; signal?: AbortSignal } = {},
  ): Promise<T | null> {
    this.calls++;
    const url = `${this.ep.adminUrl.replace(/\/$/, "")}/admin/v2/${path}`;
    const signals = [AbortSignal.timeout(this.ep.timeoutMs), ...(opts.signal ? [opts.signal] : [])];
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: this.headers(opts.body !== undefined),
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.any(signals),
        redirect: "follow",
      });
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      throw unreachable(this.ep, e);
    }
    const text = await res.text().catch(() => "");
    if (res.status === 404 && opts.notFound === "null") return null;
    if (!res.ok) throw statusError(this.ep, res.status, text, what);
    if (!text.trim()) return null;
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      throw new BrokerError("protocol", {
        message: `${what}: not JSON`,
        cause: e,
        userMessage: `Pulsar at ${this.ep.adminUrl} answered something other than JSON when asked to ${what}. Is adminUrl the broker's web service (port 8080 by default)?`,
      });
    }
  }

  get<T>(path: string, what: string, opts?: { notFound?: "null"; signal?: AbortSignal }) {
    return this.request<T>("GET", path, what, opts);
  }

  /** The response headers of a GET whose body is a message (a peek), without reading the body; null for 404. */
  async headersOf(path: string, what: string): Promise<Headers | null> {
    this.calls++;
    let res: Response;
    try {
      res = await fetch(`${this.ep.adminUrl.replace(/\/$/, "")}/admin/v2/${path}`, {
        headers: this.headers(false),
        signal: AbortSignal.timeout(this.ep.timeoutMs),
      });
    } catch (e) {
      throw unreachable(this.ep, e);
    }
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok) throw statusError(this.ep, res.status, await res.text().catch(() => ""), what);
    await res.body?.cancel();
    return res.headers;
  }
}

/** A parsed WebSocket frame from Pulsar. */
export type Frame = Record<string, unknown>;

/**
 * One WebSocket to Pulsar with its frames queued, so none is missed between awaits. `next()`
 * waits for the next frame (or the socket's end), at most `timeoutMs`.
 */
export class PulsarSocket {
  private readonly frames: Frame[] = [];
  private waiter: ((f: Frame | null) => void) | null = null;
  private ended: Error | null = null;

  private constructor(
    private readonly ws: WebSocket,
    private readonly ep: PulsarEndpoint,
  ) {
    ws.on("message", (data) => {
      let f: Frame;
      try {
        f = JSON.parse(data.toString()) as Frame;
      } catch {
        f = { result: "error", errorMsg: "a frame that is not JSON" };
      }
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = null;
        w(f);
      } else this.frames.push(f);
    });
    const end = (err: Error) => {
      this.ended ??= err;
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = null;
        w(null);
      }
    };
    ws.on("close", (code, reason) => end(new Error(`closed (${code}${reason.length ? ` ${reason.toString()}` : ""})`)));
    ws.on("error", (e) => end(e));
  }

  /** Opens `ws/v2/<path>`; a refused handshake is a BrokerError with Pulsar's reason. */
  static open(ep: PulsarEndpoint, path: string, what: string): Promise<PulsarSocket> {
    const url = `${ep.serviceUrl.replace(/\/$/, "")}/ws/v2/${path}`;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, {
        headers: ep.token ? { authorization: `Bearer ${ep.token}` } : {},
        handshakeTimeout: ep.timeoutMs,
        maxPayload: 64 * 1024 * 1024,
      });
      let settled = false;
      const fail = (e: BrokerError) => {
        if (settled) return;
        settled = true;
        ws.terminate();
        reject(e);
      };
      ws.once("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          if (body.length < 4096) body += c.toString();
        });
        res.on("end", () => fail(statusError(ep, res.statusCode ?? 0, body, what)));
        res.on("error", () => fail(statusError(ep, res.statusCode ?? 0, body, what)));
      });
      ws.once("error", (e) =>
        fail(
          NETWORK.test(String((e as Error).message))
            ? unreachable(ep, e)
            : new BrokerError("protocol", {
                message: String(e),
                cause: e,
                userMessage: `The WebSocket to Pulsar at ${ep.serviceUrl} failed to ${what}: ${(e as Error).message}.`,
              }),
        ),
      );
      ws.once("open", () => {
        if (settled) return;
        settled = true;
        resolve(new PulsarSocket(ws, ep));
      });
    });
  }

  send(frame: Frame): void {
    if (this.ended) throw this.closedError();
    this.ws.send(JSON.stringify(frame));
  }

  /** The next frame; null when nothing came within `timeoutMs` (or the socket ended: see `endedWith`). */
  next(timeoutMs = this.ep.timeoutMs, signal?: AbortSignal): Promise<Frame | null> {
    const queued = this.frames.shift();
    if (queued) return Promise.resolve(queued);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => {
      const done = (f: Frame | null) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(f);
      };
      const onAbort = () => {
        this.waiter = null;
        done(null);
      };
      const timer = setTimeout(() => {
        this.waiter = null;
        done(null);
      }, timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiter = done;
    });
  }

  get endedWith(): Error | null {
    return this.ended;
  }

  closedError(): BrokerError {
    return new BrokerError("unreachable", {
      message: this.ended?.message ?? "closed",
      userMessage: `The connection to Pulsar at ${this.ep.serviceUrl} closed in the middle of the work (${this.ended?.message ?? "closed"}). Retry.`,
    });
  }

  /** Closes and waits (briefly) for the close to finish, so the broker has the consumer's acknowledgements flushed. */
  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.ws.terminate();
        resolve();
      }, 3000);
      this.ws.once("close", () => {
        clearTimeout(t);
        resolve();
      });
      this.ws.close();
    });
  }
}
