import { createAdapter } from "@/lib/connections/registry";
import { AMQP_URL, testAmqpUrlVia, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { CuttableProxy } from "./tcp-proxy";

/**
 * A RabbitMQ adapter whose connection runs through a proxy the test can freeze, hold or cut (the
 * broker-away and lost-ack tests). Call `start` in beforeAll and `stop` in afterAll.
 */
export function proxiedRabbitAdapter(connectionId: string) {
  const proxy = new CuttableProxy(Number(new URL(AMQP_URL).port || 5672));
  const state = { proxy, adapter: null as unknown as BrokerAdapter };
  return Object.assign(state, {
    async start() {
      await proxy.start();
      state.adapter = createAdapter(testConfig({ id: connectionId, url: testAmqpUrlVia(proxy.port) }));
    },
    async stop() {
      await state.adapter?.close();
      await proxy.cut();
    },
  });
}
