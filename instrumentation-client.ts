import { config } from "zod";

// Runs in the browser before the app's own code. zod 4 probes `new Function` to compile fast
// parsers; the Content-Security-Policy (no 'unsafe-eval') blocks the probe and the browser reports a
// violation on every page that parses on the client. Its interpreted mode needs no eval.
config({ jitless: true });
