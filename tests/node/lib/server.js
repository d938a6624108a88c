// Test helper: starts the real dynaburst binary on a free port, builds SDK
// clients pointed at it, and stops it with SIGTERM.
//
// Each test file calls `useServer()` at the top level; node:test runs every
// file in its own process, so each file gets its own server.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { BatchWriteCommand, DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "..", "..", "..");

export const BIN =
  process.env.DYNABURST_BIN || resolve(repoRoot, "target", "release", "dynaburst");

const LISTEN_RE = /dynaburst listening on (http:\/\/\S+)/;

/**
 * Spawns `dynaburst serve --host 127.0.0.1 --port 0` (then `args`) and
 * resolves once the "dynaburst listening on http://127.0.0.1:PORT" line has
 * been printed.
 */
export async function startServer({ timeoutMs = 15000, args = [] } = {}) {
  if (!existsSync(BIN)) {
    throw new Error(`dynaburst binary not found at ${BIN} (set DYNABURST_BIN)`);
  }
  // DYNABURST_TEST_DATA_DIR=1 runs the suite against durable storage:
  // `serve --data-dir` in a fresh directory, removed when the server exits.
  const serveArgs = ["serve", "--host", "127.0.0.1", "--port", "0", ...args];
  const dataDir =
    process.env.DYNABURST_TEST_DATA_DIR === "1" ? mkdtempSync(join(tmpdir(), "dynaburst-node-")) : null;
  if (dataDir) serveArgs.push("--data-dir", dataDir);
  const proc = spawn(BIN, serveArgs, {
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (dataDir) proc.once("exit", () => rmSync(dataDir, { recursive: true, force: true }));
  let stderr = "";
  proc.stderr.setEncoding("utf8");
  proc.stderr.on("data", (d) => {
    stderr += d;
    if (stderr.length > 64 * 1024) stderr = stderr.slice(-64 * 1024);
  });
  const exited = new Promise((res) => {
    proc.once("exit", (code, signal) => res({ code, signal }));
  });

  const endpoint = await new Promise((res, rej) => {
    let buf = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      rej(new Error(`no listening line within ${timeoutMs} ms; stdout=${JSON.stringify(buf)} stderr=${JSON.stringify(stderr)}`));
    }, timeoutMs);
    proc.stdout.setEncoding("utf8");
    const onData = (d) => {
      buf += d;
      const m = LISTEN_RE.exec(buf);
      if (m) {
        clearTimeout(timer);
        proc.stdout.off("data", onData);
        // keep draining stdout so the child never blocks on a full pipe
        proc.stdout.resume();
        res(m[1]);
      }
    };
    proc.stdout.on("data", onData);
    proc.once("exit", (code, signal) => {
      clearTimeout(timer);
      rej(new Error(`dynaburst exited early (code=${code}, signal=${signal}); stdout=${JSON.stringify(buf)} stderr=${JSON.stringify(stderr)}`));
    });
    proc.once("error", (e) => {
      clearTimeout(timer);
      rej(e);
    });
  });

  const port = Number(new URL(endpoint).port);

  /** Sends SIGTERM and waits for exit; SIGKILL after `graceMs`. */
  async function stop({ graceMs = 10000 } = {}) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      return { code: proc.exitCode, signal: proc.signalCode };
    }
    proc.kill("SIGTERM");
    const timedOut = Symbol("timeout");
    // The grace timer is cancelled once the process exits so that it does
    // not keep the test process alive for graceMs.
    const ac = new AbortController();
    const timer = sleep(graceMs, timedOut, { signal: ac.signal }).catch(() => null);
    const r = await Promise.race([exited, timer]);
    ac.abort();
    if (r === timedOut) {
      proc.kill("SIGKILL");
      const k = await exited;
      return { ...k, timedOut: true };
    }
    return r;
  }

  return { endpoint, port, proc, stop, stderr: () => stderr };
}

/** Low-level client for an endpoint (no retries, so errors surface as-is). */
export function makeClient(endpoint) {
  return new DynamoDBClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "x", secretAccessKey: "y" },
    maxAttempts: 1,
  });
}

export function makeDocClient(client, unmarshallOptions = {}) {
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
    unmarshallOptions,
  });
}

/**
 * Registers before/after hooks for the current test file (or suite) and
 * returns a context object whose fields are filled in by the `before` hook.
 * `setup(ctx)`, if given, runs in the same hook once the server is up (used
 * to create tables and seed data, so ordering never depends on how separate
 * hooks are scheduled). `args` are passed to `dynaburst serve`.
 */
export function useServer(setup = null, { args = [] } = {}) {
  const ctx = { server: null, client: null, doc: null, endpoint: null };
  before(async () => {
    ctx.server = await startServer({ args });
    ctx.endpoint = ctx.server.endpoint;
    ctx.client = makeClient(ctx.endpoint);
    ctx.doc = makeDocClient(ctx.client);
    if (setup) await setup(ctx);
  });
  after(async () => {
    ctx.client?.destroy();
    if (ctx.server) await ctx.server.stop();
  });
  return ctx;
}

let counter = 0;
/** A table name unique within this process. */
export function tableName(prefix = "t") {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

/** Polls DescribeTable until the table is ACTIVE (up to `timeoutMs`). */
export async function waitActive(client, TableName, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const out = await client.send(new DescribeTableCommand({ TableName }));
    if (out.Table.TableStatus === "ACTIVE") return out.Table;
    if (Date.now() > deadline) {
      throw new Error(`table ${TableName} still ${out.Table.TableStatus} after ${timeoutMs} ms`);
    }
    await sleep(50);
  }
}

/** AttributeDefinitions from { name: type }, in the object's order. */
export const attributes = (types) =>
  Object.entries(types).map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType }));

/** A KeySchema from [attribute, KeyType] pairs. */
export const keySchema = (...keys) => keys.map(([AttributeName, KeyType]) => ({ AttributeName, KeyType }));

/** One BatchWriteItem (document client) putting `items` into `table`. */
export const batchWrite = (doc, table, items) =>
  doc.send(new BatchWriteCommand({ RequestItems: { [table]: items.map((Item) => ({ PutRequest: { Item } })) } }));

/** Puts `items` in BatchWriteItems of 25; each must leave nothing unprocessed. */
export async function batchPut(doc, table, items) {
  for (let i = 0; i < items.length; i += 25) {
    const out = await batchWrite(doc, table, items.slice(i, i + 25));
    assert.deepEqual(out.UnprocessedItems, {});
  }
}

/**
 * The CreateTable request of an on-demand table: hash key `pk` (type S by
 * default) and an optional range key `sk`; `extra` (Tags, ...) is added.
 */
export function tableParams({ name = tableName(), hashType = "S", rangeType = null, ...extra } = {}) {
  const types = rangeType ? { pk: hashType, sk: rangeType } : { pk: hashType };
  const keys = rangeType ? [["pk", "HASH"], ["sk", "RANGE"]] : [["pk", "HASH"]];
  return {
    TableName: name,
    AttributeDefinitions: attributes(types),
    KeySchema: keySchema(...keys),
    BillingMode: "PAY_PER_REQUEST",
    ...extra,
  };
}

/** Creates the table of `tableParams(options)`, then waits for ACTIVE. */
export async function createTable(client, options = {}) {
  const params = tableParams(options);
  await client.send(new CreateTableCommand(params));
  await waitActive(client, params.TableName);
  return params.TableName;
}

/**
 * Runs `fn`, asserts it rejects, and returns the error (for further
 * assertions on its fields). If given, the error's `name` must equal `name`,
 * and its message must equal `message` (a string) or match it (a RegExp).
 */
export async function expectError(fn, name = undefined, message = undefined) {
  let err;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  if (err === undefined) throw new Error("expected the call to fail, but it succeeded");
  if (name !== undefined) assert.equal(err.name, name);
  if (message instanceof RegExp) assert.match(err.message, message);
  else if (message !== undefined) assert.equal(err.message, message);
  return err;
}

/** expectError for a ValidationException with exactly (or matching) `message`. */
export const expectValidation = (fn, message) => expectError(fn, "ValidationException", message);
