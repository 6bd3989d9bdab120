/** Realistic stack traces as the adapters receive them in headers; shared by the triage tests. */

export const JAVA_SPRING = `org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method 'public void com.acme.orders.OrderListener.onOrder(com.acme.orders.Order)' threw exception
\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.wrapToListenerExecutionFailedExceptionIfNeeded(AbstractMessageListenerContainer.java:1776) ~[spring-rabbit-3.1.2.jar:3.1.2]
\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1666) ~[spring-rabbit-3.1.2.jar:3.1.2]
\tat java.base/java.lang.Thread.run(Thread.java:1583) [na:na]
Caused by: org.springframework.web.client.ResourceAccessException: I/O error on POST request for "https://payments.internal/charge": Read timed out
\tat org.springframework.web.client.RestTemplate.createResourceAccessException(RestTemplate.java:915) ~[spring-web-6.1.5.jar:6.1.5]
\tat com.acme.orders.PaymentClient.charge(PaymentClient.java:58) ~[classes/:na]
\tat com.acme.orders.OrderListener.onOrder(OrderListener.java:31) ~[classes/:na]
\tat jdk.internal.reflect.GeneratedMethodAccessor87.invoke(Unknown Source) ~[na:na]
\t... 12 common frames omitted
Caused by: java.net.SocketTimeoutException: Read timed out after 30000 ms
\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:278) ~[na:na]
\tat java.base/java.net.Socket$SocketInputStream.read(Socket.java:1099) ~[na:na]
\tat org.apache.http.impl.io.SessionInputBufferImpl.fillBuffer(SessionInputBufferImpl.java:153) ~[httpcore-4.4.16.jar:4.4.16]
\t... 20 common frames omitted
`;

/** The root cause's own frames are all JDK: the app frame comes from the enclosing "... N more" tail. */
export const JAVA_ROOT_IN_TAIL = `java.lang.IllegalStateException: Failed to process record 42
\tat com.acme.billing.InvoiceJob.lambda$run$0(InvoiceJob.java:77)
\tat com.acme.billing.InvoiceJob$$Lambda$412/0x0000000800c0b440.accept(Unknown Source)
\tat com.acme.billing.InvoiceJob$$EnhancerBySpringCGLIB$$5f1a2b3c.run(<generated>)
\tat java.base/java.lang.Thread.run(Thread.java:833)
Caused by: java.lang.NumberFormatException: For input string: "12x"
\tat java.base/java.lang.NumberFormatException.forInputString(NumberFormatException.java:67)
\tat java.base/java.lang.Integer.parseInt(Integer.java:668)
\t... 4 more
\tSuppressed: java.io.IOException: close failed
\t\tat com.acme.billing.Other.close(Other.java:9)
`;

export const JAVA_NPE = `Exception in thread "kafka-listener-1" java.lang.NullPointerException: Cannot invoke "com.acme.Customer.getEmail()" because "customer" is null
\tat app//com.acme.notify.Mailer.send(Mailer.java:120)
\tat app//com.acme.notify.Mailer$1.run(Mailer.java:88)
`;

export const DOTNET = `System.InvalidOperationException: Failed to handle message 7b1c ---> System.TimeoutException: The operation has timed out after 00:00:30.
   at Npgsql.NpgsqlConnector.ReadMessage(Boolean async)
   at Acme.Orders.OrderRepository.<SaveAsync>d__7.MoveNext() in /src/Acme.Orders/OrderRepository.cs:line 88
--- End of stack trace from previous location ---
   at Acme.Orders.OrderHandler.<>c__DisplayClass5_0.<Handle>b__0(Order o) in /src/Acme.Orders/OrderHandler.cs:line 41
   --- End of inner exception stack trace ---
   at Acme.Orders.OrderHandler.Handle(Order order) in C:\\build\\src\\Acme.Orders\\OrderHandler.cs:line 45
   at MassTransit.Pipeline.Filters.HandlerMessageFilter\`1.Send(ConsumeContext\`1 context)
`;

export const DOTNET_SIMPLE = `System.ArgumentNullException: Value cannot be null. (Parameter 'customerId')
   at Acme.Billing.Invoice..ctor(String customerId) in /src/Billing/Invoice.cs:line 12
   at Acme.Billing.InvoiceConsumer.Consume(ConsumeContext\`1 context) in /src/Billing/InvoiceConsumer.cs:line 30
`;

export const PYTHON_CHAINED = `Traceback (most recent call last):
  File "/usr/local/lib/python3.12/site-packages/urllib3/connectionpool.py", line 793, in urlopen
    response = self._make_request(
  File "/usr/local/lib/python3.12/socket.py", line 720, in readinto
    return self._sock.recv_into(b)
TimeoutError: timed out

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/app/workers/orders.py", line 41, in handle
    charge(order)
  File "/app/workers/payments.py", line 12, in charge
    raise PaymentError(f"charge failed for order {order.id}") from e
workers.payments.PaymentError: charge failed for order 123
`;

export const PYTHON = `Traceback (most recent call last):
  File "/srv/app/consumer/main.py", line 88, in on_message
    process(json.loads(body))
  File "/srv/app/consumer/handlers.py", line 17, in process
    amount = Decimal(payload["amount"])
  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
KeyError: 'amount'
`;

export const NODE = `TypeError: Cannot read properties of undefined (reading 'sku')
    at OrderService.reserve (/app/dist/services/order-service.js:42:31)
    at async Promise.all (index 0)
    at async OrderConsumer.handle (/app/dist/consumers/order-consumer.js:18:5)
    at async process.processTicksAndRejections (node:internal/process/task_queues:95:5)
`;

export const NODE_INTERNAL_FIRST = `Error: connect ECONNREFUSED 10.0.3.7:5432
    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16)
    at Array.map (<anonymous>)
    at /app/node_modules/pg-pool/index.js:45:11
    at async Repo.save (file:///app/src/db/repo.mjs:20:3) {
  errno: -111,
  code: 'ECONNREFUSED'
}`;

export const NODE_CAUSE = `Error: failed to publish invoice
    at publish (/app/src/invoice.js:10:11)
    at async main (/app/src/index.js:3:3) {
  [cause]: SyntaxError: Unexpected token } in JSON at position 12
      at JSON.parse (<anonymous>)
      at parseBody (/app/src/body.js:4:15)
}`;

export const GO_PANIC = `panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x4a1b2c]

goroutine 17 [running]:
panic({0x6c1e20?, 0x9a4b50?})
\t/usr/local/go/src/runtime/panic.go:770 +0x132
encoding/json.(*decodeState).object(0xc000184000, {0x6b0e40?, 0xc0001a2000?, 0x40?})
\t/usr/local/go/src/encoding/json/decode.go:700 +0x1d2
github.com/acme/orders/internal/consumer.(*Handler).Handle.func1(0xc00012e000)
\t/app/internal/consumer/handler.go:42 +0x1d
github.com/acme/orders/internal/consumer.(*Handler).Handle(0xc0000b6000, {0x7a1f00, 0xc000010000})
\t/app/internal/consumer/handler.go:58 +0x8f
created by main.main in goroutine 1
\t/app/cmd/consumer/main.go:30 +0x2a5

goroutine 1 [chan receive]:
main.main()
\t/app/cmd/consumer/main.go:33 +0x2c0
`;

export const GO_PANIC_MAIN = `panic: order 9912 has no lines [recovered]
\tpanic: order 9912 has no lines

goroutine 1 [running]:
main.handle(...)
\t/app/main.go:42
main.main()
\t/app/main.go:12 +0x1d
`;
