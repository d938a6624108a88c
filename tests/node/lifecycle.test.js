// Process lifecycle: --port 0 picks a free port, SIGTERM exits cleanly.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ListTablesCommand } from "@aws-sdk/client-dynamodb";

import { makeClient, startServer } from "./lib/server.js";

test("two servers on --port 0 get distinct ports; SIGTERM makes each exit with code 0", async () => {
  const a = await startServer();
  const b = await startServer();
  try {
    assert.match(a.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(a.port > 0 && b.port > 0);
    assert.notEqual(a.port, b.port);

    for (const s of [a, b]) {
      const client = makeClient(s.endpoint);
      const out = await client.send(new ListTablesCommand({}));
      assert.deepEqual(out.TableNames, []);
      client.destroy();
    }
  } finally {
    const ra = await a.stop();
    const rb = await b.stop();
    assert.deepEqual(ra, { code: 0, signal: null }, `stderr: ${a.stderr()}`);
    assert.deepEqual(rb, { code: 0, signal: null }, `stderr: ${b.stderr()}`);
  }
});
