/**
 * Minimal client for the RabbitMQ management HTTP API: the calls discovery and queue facts need.
 * Failures are typed so the adapter can degrade (configured DLQs still served, with a warning).
 */
export interface MgmtQueue {
  name: string;
  vhost: string;
  type?: string; // classic | quorum | stream
  arguments?: Record<string, unknown>;
  effective_policy_definition?: Record<string, unknown> | unknown[];
  policy?: string | null;
  operator_policy?: string | null;
  messages?: number;
  messages_ready?: number;
  messages_unacknowledged?: number;
  consumers?: number;
  durable?: boolean;
  exclusive?: boolean;
  auto_delete?: boolean;
  /**
   * The AMQP `timestamp` property of the head message (seconds since the epoch), as the producer
   * set it: null when the head message has none or is paged out; absent for quorum queues (3.10).
   */
  head_message_timestamp?: number | null;
}

export interface MgmtBinding {
  source: string;
  destination: string;
  destination_type: "queue" | "exchange";
  routing_key: string;
  arguments?: Record<string, unknown>;
}

export interface MgmtExchange {
  name: string;
  type: string;
  arguments?: Record<string, unknown>;
  /** The name of the policy applied to it; absent or empty when none. */
  policy?: string | null;
}

export interface MgmtPolicy {
  name: string;
  vhost: string;
  pattern: string;
  "apply-to": string; // queues | exchanges | all | classic_queues | quorum_queues | streams
  definition: Record<string, unknown>;
  priority: number;
}

export interface MgmtCallOptions {
  signal?: AbortSignal;
}

export class ManagementError extends Error {
  constructor(
    readonly kind: "unreachable" | "auth" | "not_found" | "protocol",
    message: string,
    /** The HTTP status, when the API answered. */
    readonly status?: number,
  ) {
    super(message);
    this.name = "ManagementError";
  }
}

export class ManagementClient {
  private readonly auth: string;
  constructor(
    private readonly baseUrl: string,
    username: string,
    password: string,
    private readonly timeoutMs = 5000,
  ) {
    this.auth = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  }

  private async get<T>(path: string, opts: MgmtCallOptions = {}): Promise<T> {
    let res: Response;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    try {
      res = await fetch(new URL(path, this.baseUrl.endsWith("/") ? this.baseUrl : `${this.baseUrl}/`), {
        headers: { authorization: this.auth, accept: "application/json" },
        signal: opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout,
      });
    } catch (e) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      throw new ManagementError(
        "unreachable",
        `management API at ${this.baseUrl} did not answer: ${(e as Error).message}`,
      );
    }
    if (res.status === 401 || res.status === 403)
      throw new ManagementError("auth", `management API refused the credentials (${res.status})`, res.status);
    if (res.status === 404) throw new ManagementError("not_found", `management API: ${path} not found`, res.status);
    // A node that is starting or stopping answers 503 (and a proxy in front of it 502/504).
    if ([502, 503, 504].includes(res.status))
      throw new ManagementError("unreachable", `management API answered ${res.status} for ${path}`, res.status);
    if (!res.ok) throw new ManagementError("protocol", `management API answered ${res.status} for ${path}`, res.status);
    return (await res.json()) as T;
  }

  /** The broker's version ("3.10.8", "4.0.5"): it decides whether quorum queues have a default delivery limit. */
  async brokerVersion(opts: MgmtCallOptions = {}): Promise<string | null> {
    const o = await this.get<{ rabbitmq_version?: unknown }>("api/overview?columns=rabbitmq_version", opts);
    return typeof o.rabbitmq_version === "string" ? o.rabbitmq_version : null;
  }

  /** Every queue of the vhost in one request, whatever their number (no per-queue calls). */
  listQueues(vhost: string, opts: MgmtCallOptions = {}): Promise<MgmtQueue[]> {
    const cols =
      "name,vhost,type,arguments,effective_policy_definition,policy,messages,messages_ready,messages_unacknowledged,consumers," +
      "operator_policy,durable,exclusive,auto_delete,head_message_timestamp";
    return this.get(`api/queues/${encodeURIComponent(vhost)}?columns=${cols}`, opts);
  }

  getQueue(vhost: string, name: string): Promise<MgmtQueue> {
    return this.get(`api/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(name)}?msg_rates=false`);
  }

  listBindings(vhost: string, opts: MgmtCallOptions = {}): Promise<MgmtBinding[]> {
    return this.get(`api/bindings/${encodeURIComponent(vhost)}`, opts);
  }

  listExchanges(vhost: string, opts: MgmtCallOptions = {}): Promise<MgmtExchange[]> {
    return this.get(`api/exchanges/${encodeURIComponent(vhost)}?columns=name,type,arguments,policy`, opts);
  }

  /** User policies of the vhost (not operator policies: those cannot set an alternate exchange). */
  listPolicies(vhost: string, opts: MgmtCallOptions = {}): Promise<MgmtPolicy[]> {
    return this.get(`api/policies/${encodeURIComponent(vhost)}`, opts);
  }
}
