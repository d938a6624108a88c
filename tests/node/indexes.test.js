// Secondary indexes through the JS SDK v3: CreateTable with GSIs and LSIs,
// DescribeTable, index maintenance by every write, Query and Scan on indexes
// (projections, Select, paging, sparse indexes), multi-attribute GSI keys,
// index key validation, UpdateTable adding and deleting a GSI,
// ConsumedCapacity INDEXES and GSI back-pressure.
// Same expectations as tests/python/test_indexes.py.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import {
  CreateTableCommand,
  DescribeTableCommand,
  PutItemCommand,
  UpdateItemCommand,
  UpdateTableCommand,
} from "@aws-sdk/client-dynamodb";
import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
  paginateQuery,
} from "@aws-sdk/lib-dynamodb";

import {
  attributes,
  batchPut,
  batchWrite,
  expectError,
  expectValidation,
  keySchema,
  tableName,
  useServer,
  waitActive,
} from "./lib/server.js";

const ctx = useServer();

const P = "One or more parameter values were invalid: ";

/** A GSI/LSI definition: keys is a list of [attribute, KeyType]. */
function index(IndexName, keys, Projection = { ProjectionType: "ALL" }, extra = {}) {
  return {
    IndexName,
    KeySchema: keySchema(...keys),
    Projection,
    ...extra,
  };
}

/** CreateTable (on demand unless `params` says otherwise), then waits for ACTIVE. */
async function createIndexedTable(params) {
  const TableName = tableName("idx");
  await ctx.client.send(new CreateTableCommand({ TableName, BillingMode: "PAY_PER_REQUEST", ...params }));
  await waitActive(ctx.client, TableName);
  return TableName;
}

/**
 * pk/sk table; GSI by_status (status, amount), KEYS_ONLY GSI by_customer
 * (customer), INCLUDE LSI by_amount (pk, amount) projecting note.
 */
const createOrders = () =>
  createIndexedTable({
    AttributeDefinitions: attributes({ pk: "S", sk: "S", status: "S", amount: "N", customer: "S" }),
    KeySchema: keySchema(["pk", "HASH"], ["sk", "RANGE"]),
    GlobalSecondaryIndexes: [
      index("by_status", [["status", "HASH"], ["amount", "RANGE"]]),
      index("by_customer", [["customer", "HASH"]], { ProjectionType: "KEYS_ONLY" }),
    ],
    LocalSecondaryIndexes: [
      index("by_amount", [["pk", "HASH"], ["amount", "RANGE"]], { ProjectionType: "INCLUDE", NonKeyAttributes: ["note"] }),
    ],
  });

/** Multi-attribute GSI "games": partition key (region S, season N), sort key (round S, score N). */
const createTournament = () =>
  createIndexedTable({
    AttributeDefinitions: attributes({ pk: "S", region: "S", season: "N", round: "S", score: "N" }),
    KeySchema: keySchema(["pk", "HASH"]),
    GlobalSecondaryIndexes: [index("games", [["region", "HASH"], ["season", "HASH"], ["round", "RANGE"], ["score", "RANGE"]])],
  });

/** An orders item (document form); attributes left undefined are absent. */
function order(sk, { status, amount, customer, note, pk = "u1" } = {}) {
  const item = { pk, sk };
  if (status !== undefined) item.status = status;
  if (amount !== undefined) item.amount = amount;
  if (customer !== undefined) item.customer = customer;
  if (note !== undefined) item.note = note;
  item.extra = "x";
  return item;
}

const sks = (out) => out.Items.map((i) => i.sk);

/** Query (document client) of `table` with `params`. */
const query = (TableName, params) => ctx.doc.send(new QueryCommand({ TableName, ...params }));

/** Query of GSI by_status for one status. */
const byStatus = (table, status, params = {}) =>
  query(table, {
    IndexName: "by_status",
    KeyConditionExpression: "#s = :s",
    ExpressionAttributeNames: { "#s": "status" },
    ExpressionAttributeValues: { ":s": status },
    ...params,
  });

/** Query of KEYS_ONLY GSI by_customer for one customer. */
const byCustomer = (table, customer, params = {}) =>
  query(table, {
    IndexName: "by_customer",
    KeyConditionExpression: "customer = :c",
    ExpressionAttributeValues: { ":c": customer },
    ...params,
  });

/**
 * Query of LSI by_amount in partition u1 (":p"); a KeyConditionExpression
 * given replaces "pk = :p", ExpressionAttributeValues given are added.
 */
const byAmount = (table, { KeyConditionExpression = "pk = :p", ExpressionAttributeValues = {}, ...params } = {}) =>
  query(table, {
    IndexName: "by_amount",
    KeyConditionExpression,
    ExpressionAttributeValues: { ":p": "u1", ...ExpressionAttributeValues },
    ...params,
  });


/** DescribeTable until GSI `name` is ACTIVE (bounded: 200 polls of 50 ms). */
async function waitIndexActive(table, name, polls = 200) {
  let desc;
  for (let i = 0; i < polls; i++) {
    const t = (await ctx.client.send(new DescribeTableCommand({ TableName: table }))).Table;
    desc = t.GlobalSecondaryIndexes.find((g) => g.IndexName === name);
    assert.ok(desc, `index ${name} not described`);
    if (desc.IndexStatus === "ACTIVE") return desc;
    await sleep(50);
  }
  throw new Error(`index ${name} still ${desc.IndexStatus} after ${polls} polls`);
}

describe("secondary indexes", () => {
  test("DescribeTable lists every GSI and LSI with key schema, projection, status, ARN and item count", async () => {
    const table = await createOrders();
    for (let i = 0; i < 3; i++) {
      await ctx.doc.send(new PutCommand({ TableName: table, Item: order(`o${i}`, { status: "open", amount: 10 + i, customer: "c1" }) }));
    }
    await ctx.doc.send(new PutCommand({ TableName: table, Item: order("o9", { customer: "c2" }) })); // in by_customer only
    const t = (await ctx.client.send(new DescribeTableCommand({ TableName: table }))).Table;
    const gsis = Object.fromEntries(t.GlobalSecondaryIndexes.map((g) => [g.IndexName, g]));
    assert.deepEqual(Object.keys(gsis).sort(), ["by_customer", "by_status"]);
    const st = gsis.by_status;
    assert.deepEqual(st.KeySchema, [
      { AttributeName: "status", KeyType: "HASH" },
      { AttributeName: "amount", KeyType: "RANGE" },
    ]);
    assert.deepEqual(st.Projection, { ProjectionType: "ALL" });
    assert.equal(st.IndexStatus, "ACTIVE");
    assert.equal(st.IndexArn, `${t.TableArn}/index/by_status`);
    assert.equal(st.ItemCount, 3);
    assert.equal(st.Backfilling, undefined);
    assert.equal(st.ProvisionedThroughput.ReadCapacityUnits, 0);
    assert.equal(gsis.by_customer.ItemCount, 4);
    assert.deepEqual(gsis.by_customer.Projection, { ProjectionType: "KEYS_ONLY" });
    assert.equal(t.LocalSecondaryIndexes.length, 1);
    const [lsi] = t.LocalSecondaryIndexes;
    assert.equal(lsi.IndexName, "by_amount");
    assert.deepEqual(lsi.KeySchema, [
      { AttributeName: "pk", KeyType: "HASH" },
      { AttributeName: "amount", KeyType: "RANGE" },
    ]);
    assert.deepEqual(lsi.Projection, { ProjectionType: "INCLUDE", NonKeyAttributes: ["note"] });
    assert.equal(lsi.IndexArn, `${t.TableArn}/index/by_amount`);
    assert.equal(lsi.ItemCount, 3);
    assert.equal(lsi.IndexStatus, undefined);
  });

  test("Put, BatchWrite, Update (SET and REMOVE), Delete and TransactWrite keep the GSI in step; items without its key stay out", async () => {
    const table = await createOrders();
    await ctx.doc.send(new PutCommand({ TableName: table, Item: order("a", { status: "open", amount: 30 }) }));
    await ctx.doc.send(new PutCommand({ TableName: table, Item: order("b", { status: "open", amount: 10 }) }));
    await ctx.doc.send(new PutCommand({ TableName: table, Item: order("c", { amount: 5 }) })); // no status: sparse
    await batchPut(ctx.doc, table, [order("d", { status: "open", amount: 20 })]);
    assert.deepEqual(sks(await byStatus(table, "open")), ["b", "d", "a"], "ordered by amount");
    assert.deepEqual(sks(await byStatus(table, "open", { ScanIndexForward: false })), ["a", "d", "b"]);

    // UpdateItem moves "a" from open to shipped.
    await ctx.doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: "u1", sk: "a" },
        UpdateExpression: "SET #s = :s",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: { ":s": "shipped" },
      }),
    );
    assert.deepEqual(sks(await byStatus(table, "open")), ["b", "d"]);
    assert.deepEqual(sks(await byStatus(table, "shipped")), ["a"]);

    // REMOVE of the index's range key takes the item out of the index.
    await ctx.doc.send(new UpdateCommand({ TableName: table, Key: { pk: "u1", sk: "d" }, UpdateExpression: "REMOVE amount" }));
    assert.deepEqual(sks(await byStatus(table, "open")), ["b"]);

    // DeleteItem and a transaction.
    await ctx.doc.send(new DeleteCommand({ TableName: table, Key: { pk: "u1", sk: "b" } }));
    await ctx.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: table, Item: order("e", { status: "open", amount: 1 }) } },
          { Delete: { TableName: table, Key: { pk: "u1", sk: "a" } } },
        ],
      }),
    );
    assert.deepEqual(sks(await byStatus(table, "open")), ["e"]);
    assert.deepEqual(sks(await byStatus(table, "shipped")), []);

    const scanned = await ctx.doc.send(new ScanCommand({ TableName: table, IndexName: "by_status" }));
    assert.deepEqual(scanned.Items, [order("e", { status: "open", amount: 1 })]);
    assert.equal(scanned.Count, 1);
    assert.equal(scanned.ScannedCount, 1);
    // The table itself still has c (no status) and d (no amount).
    const all = await ctx.doc.send(new ScanCommand({ TableName: table }));
    assert.deepEqual(all.Items.map((i) => i.sk).sort(), ["c", "d", "e"]);
  });

  test("projections: KEYS_ONLY GSI, INCLUDE LSI, ALL_ATTRIBUTES fetched through an LSI and refused on a GSI", async () => {
    const table = await createOrders();
    await ctx.doc.send(new PutCommand({ TableName: table, Item: order("a", { status: "open", amount: 7, customer: "c1", note: "fragile" }) }));

    const keysOnly = await byCustomer(table, "c1");
    assert.deepEqual(keysOnly.Items, [{ pk: "u1", sk: "a", customer: "c1" }]);

    const lsi = await byAmount(table, { KeyConditionExpression: "pk = :p AND amount > :a", ExpressionAttributeValues: { ":a": 5 } });
    assert.deepEqual(lsi.Items, [{ pk: "u1", sk: "a", amount: 7, note: "fragile" }]);

    // An LSI fetches what it does not project from the table ...
    const whole = await byAmount(table, { Select: "ALL_ATTRIBUTES" });
    assert.deepEqual(whole.Items, [order("a", { status: "open", amount: 7, customer: "c1", note: "fragile" })]);

    // ... a GSI refuses to.
    await expectValidation(
      () =>
        byCustomer(table, "c1", { Select: "ALL_ATTRIBUTES" }),
      P + "Select type ALL_ATTRIBUTES is not supported for global secondary index by_customer because its projection type is not ALL",
    );
    await expectValidation(
      () =>
        query(table, {
          KeyConditionExpression: "pk = :p",
          ExpressionAttributeValues: { ":p": "u1" },
          Select: "ALL_PROJECTED_ATTRIBUTES",
        }),
      "1 validation error detected: ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
    );
    // Scan words it the same but without the prefix.
    await expectValidation(
      () => ctx.doc.send(new ScanCommand({ TableName: table, Select: "ALL_PROJECTED_ATTRIBUTES" })),
      "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
    );
    // A ProjectionExpression naming an attribute the GSI does not project is refused ...
    await expectValidation(
      () =>
        byCustomer(table, "c1", { ProjectionExpression: "sk, note" }),
      P + "Global secondary index by_customer does not project the requested attribute note",
    );
    // ... through an LSI it is fetched from the table.
    const fetched = await byAmount(table, { ProjectionExpression: "sk, customer" });
    assert.deepEqual(fetched.Items, [{ sk: "a", customer: "c1" }]);
  });

  test("ConsistentRead is refused on a GSI and allowed on an LSI; an unknown IndexName is a ValidationException", async () => {
    const table = await createOrders();
    await ctx.doc.send(new PutCommand({ TableName: table, Item: order("a", { status: "open", amount: 7 }) }));
    await expectValidation(() => byStatus(table, "open", { ConsistentRead: true }), "Consistent reads are not supported on global secondary indexes");
    await expectValidation(
      () => ctx.doc.send(new ScanCommand({ TableName: table, IndexName: "nope" })),
      "The table does not have the specified index: nope",
    );
    const out = await byAmount(table, { ConsistentRead: true });
    assert.deepEqual(out.Items, [{ pk: "u1", sk: "a", amount: 7 }]);
  });

  for (const [label, value, actual] of [
    ["number", { N: "1" }, "N"],
    ["NULL", { NULL: true }, "NULL"],
  ]) {
    test(`a ${label} in a string index key refuses the whole PutItem, UpdateItem and BatchWriteItem`, async () => {
      const table = await createOrders();
      const item = { pk: { S: "u1" }, sk: { S: "a" }, amount: { N: "1" }, status: value };
      const expected = `${P}Type mismatch for Index Key status Expected: S Actual: ${actual} IndexName: by_status`;
      await expectError(() => ctx.client.send(new PutItemCommand({ TableName: table, Item: item })), "ValidationException", expected);
      // UpdateItem that sets the index key to the wrong type: the item is not created.
      await expectValidation(
        () =>
          ctx.client.send(
            new UpdateItemCommand({
              TableName: table,
              Key: { pk: { S: "u1" }, sk: { S: "a" } },
              UpdateExpression: "SET #s = :v, amount = :a",
              ExpressionAttributeNames: { "#s": "status" },
              ExpressionAttributeValues: { ":v": value, ":a": { N: "1" } },
            }),
          ),
        expected,
      );
      await expectValidation(
        () =>
          batchWrite(ctx.doc, table, [
            order("ok", { status: "open", amount: 1 }),
            { pk: "u1", sk: "a", amount: 1, status: actual === "N" ? 1 : null },
          ]),
        expected,
      );
      const scanned = await ctx.doc.send(new ScanCommand({ TableName: table }));
      assert.deepEqual(scanned.Items, [], "nothing reached the table");
    });
  }

  test("an empty string index key is refused", async () => {
    const table = await createOrders();
    await expectValidation(
      () => ctx.doc.send(new PutCommand({ TableName: table, Item: order("a", { status: "", amount: 1 }) })),
      "One or more parameter values are not valid. A value specified for a secondary index key is not supported. " +
        "The AttributeValue for a key attribute cannot contain an empty string value. IndexName: by_status, IndexKey: status",
    );
    assert.equal((await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "u1", sk: "a" } }))).Item, undefined);
  });

  test("paging through a GSI resumes at index key + table key; paginateQuery yields the same items", async () => {
    const table = await createOrders();
    await batchPut(
      ctx.doc,
      table,
      Array.from({ length: 10 }, (_, i) => order(`o${String(i).padStart(2, "0")}`, { status: "open", amount: i % 4 })),
    );
    const whole = sks(await byStatus(table, "open"));
    // amount ascending; equal amounts in table-key order
    assert.deepEqual(whole, ["o00", "o04", "o08", "o01", "o05", "o09", "o02", "o06", "o03", "o07"]);

    const seen = [];
    let start;
    let pages = 0;
    for (;;) {
      const page = await byStatus(table, "open", { Limit: 3, ...(start ? { ExclusiveStartKey: start } : {}) });
      seen.push(...sks(page));
      pages += 1;
      start = page.LastEvaluatedKey;
      if (!start) break;
      const last = page.Items[page.Items.length - 1];
      assert.deepEqual(start, { pk: last.pk, sk: last.sk, status: last.status, amount: last.amount });
    }
    assert.deepEqual(seen, whole);
    assert.equal(pages, 4);

    const viaPaginator = [];
    const sizes = [];
    for await (const page of paginateQuery(
      { client: ctx.doc, pageSize: 4 },
      {
        TableName: table,
        IndexName: "by_status",
        KeyConditionExpression: "#s = :s",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: { ":s": "open" },
      },
    )) {
      sizes.push(page.Count);
      viaPaginator.push(...sks(page));
    }
    assert.deepEqual(viaPaginator, whole);
    assert.deepEqual(sizes, [4, 4, 2]);

    await expectValidation(() => byStatus(table, "open", { ExclusiveStartKey: { pk: "u1", sk: "o01" } }), "The provided starting key is invalid");
  });

  test("ReturnConsumedCapacity INDEXES reports the table and each index it wrote or read", async () => {
    const table = await createOrders();
    let out = await ctx.doc.send(
      new PutCommand({ TableName: table, Item: order("a", { status: "open", amount: 1, customer: "c1" }), ReturnConsumedCapacity: "INDEXES" }),
    );
    let c = out.ConsumedCapacity;
    assert.equal(c.TableName, table);
    assert.deepEqual(c.Table, { CapacityUnits: 1 });
    assert.deepEqual(c.GlobalSecondaryIndexes, {
      by_status: { CapacityUnits: 1 },
      by_customer: { CapacityUnits: 1 },
    });
    assert.deepEqual(c.LocalSecondaryIndexes, { by_amount: { CapacityUnits: 1 } });
    assert.equal(c.CapacityUnits, 4);
    assert.equal(c.WriteCapacityUnits, undefined, "S59: item operations report CapacityUnits alone");

    // Moving the item to another index key costs a delete and a put there.
    out = await ctx.doc.send(
      new PutCommand({ TableName: table, Item: order("a", { status: "shipped", amount: 1, customer: "c1" }), ReturnConsumedCapacity: "INDEXES" }),
    );
    assert.deepEqual(out.ConsumedCapacity.GlobalSecondaryIndexes, { by_status: { CapacityUnits: 2 } });

    out = await ctx.doc.send(new PutCommand({ TableName: table, Item: order("b"), ReturnConsumedCapacity: "TOTAL" }));
    assert.deepEqual(out.ConsumedCapacity, { TableName: table, CapacityUnits: 1 });

    c = (await byStatus(table, "shipped", { ReturnConsumedCapacity: "INDEXES" })).ConsumedCapacity;
    assert.deepEqual(c.GlobalSecondaryIndexes, { by_status: { CapacityUnits: 0.5, ReadCapacityUnits: 0.5 } });
    assert.equal(c.Table, undefined, "an index read reports only that index");
    assert.equal(c.CapacityUnits, 0.5);
  });

  test("ReturnConsumedCapacity INDEXES on BatchWriteItem, UpdateItem, DeleteItem, GetItem, LSI Query and GSI Scan", async () => {
    const table = await createOrders();
    const R = { ReturnConsumedCapacity: "INDEXES" };
    // Item operations and batches report CapacityUnits alone (S59); Query and Scan split them.
    const w = (n) => ({ CapacityUnits: n });
    const r = (n) => ({ CapacityUnits: n, ReadCapacityUnits: n });

    // "a" lands in every index, "b" (amount only) in the LSI alone.
    const batch = await ctx.doc.send(
      new BatchWriteCommand({
        RequestItems: {
          [table]: [
            { PutRequest: { Item: order("a", { status: "open", amount: 1, customer: "c1" }) } },
            { PutRequest: { Item: order("b", { amount: 2 }) } },
          ],
        },
        ...R,
      }),
    );
    assert.deepEqual(batch.ConsumedCapacity, [
      {
        TableName: table,
        ...w(6),
        Table: w(2),
        LocalSecondaryIndexes: { by_amount: w(2) },
        GlobalSecondaryIndexes: { by_status: w(1), by_customer: w(1) },
      },
    ]);

    // note is projected by by_status (ALL) and by_amount (INCLUDE note), not by the KEYS_ONLY by_customer.
    const upd = await ctx.doc.send(
      new UpdateCommand({ TableName: table, Key: { pk: "u1", sk: "a" }, UpdateExpression: "SET note = :n", ExpressionAttributeValues: { ":n": "x" }, ...R }),
    );
    assert.deepEqual(upd.ConsumedCapacity, {
      TableName: table,
      ...w(3),
      Table: w(1),
      LocalSecondaryIndexes: { by_amount: w(1) },
      GlobalSecondaryIndexes: { by_status: w(1) },
    });

    // Reads: GetItem and a table Query report only the table, an index read only that index.
    const get = await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "u1", sk: "a" }, ...R }));
    assert.deepEqual(get.ConsumedCapacity, { TableName: table, ...w(0.5), Table: w(0.5) });
    const lsi = await byAmount(table, R);
    assert.deepEqual(sks(lsi), ["a", "b"]);
    assert.deepEqual(lsi.ConsumedCapacity, { TableName: table, ...r(0.5), LocalSecondaryIndexes: { by_amount: r(0.5) } });
    const scan = await ctx.doc.send(new ScanCommand({ TableName: table, IndexName: "by_customer", ...R }));
    assert.deepEqual(scan.Items, [{ pk: "u1", sk: "a", customer: "c1" }]);
    assert.deepEqual(scan.ConsumedCapacity, { TableName: table, ...r(0.5), GlobalSecondaryIndexes: { by_customer: r(0.5) } });

    // Deleting "a" removes it from every index.
    const del = await ctx.doc.send(new DeleteCommand({ TableName: table, Key: { pk: "u1", sk: "a" }, ...R }));
    assert.deepEqual(del.ConsumedCapacity, {
      TableName: table,
      ...w(4),
      Table: w(1),
      LocalSecondaryIndexes: { by_amount: w(1) },
      GlobalSecondaryIndexes: { by_status: w(1), by_customer: w(1) },
    });
  });

  test("multi-attribute GSI: items sort by (round, score); range components need equality on every earlier one", async () => {
    const table = await createTournament();
    const rows = [["g1", "final", 50], ["g2", "semi", 70], ["g3", "final", 90], ["g4", "semi", 10], ["g5", "final", 70]];
    for (const [pk, round, score] of rows) {
      await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk, region: "eu", season: 2026, round, score } }));
    }
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "g9", region: "eu", season: 2026 } })); // sparse
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "g8", region: "us", season: 2026, round: "final", score: 1 } }));

    const games = async (extraCond = "", extraValues = {}, params = {}) => {
      const out = await query(table, {
        IndexName: "games",
        KeyConditionExpression: "#r = :r AND season = :s" + extraCond,
        ExpressionAttributeNames: { "#r": "region", ...(extraCond.includes("#rd") ? { "#rd": "round" } : {}) },
        ExpressionAttributeValues: { ":r": "eu", ":s": 2026, ...extraValues },
        ...params,
      });
      return out.Items.map((i) => i.pk);
    };

    assert.deepEqual(await games(), ["g1", "g5", "g3", "g4", "g2"]);
    assert.deepEqual(await games("", {}, { ScanIndexForward: false }), ["g2", "g4", "g3", "g5", "g1"]);
    assert.deepEqual(await games(" AND #rd = :f AND score > :x", { ":f": "final", ":x": 50 }), ["g5", "g3"]);
    assert.deepEqual(await games(" AND #rd = :f AND score BETWEEN :a AND :b", { ":f": "semi", ":a": 0, ":b": 20 }), ["g4"]);
    assert.deepEqual(await games(" AND begins_with(#rd, :p)", { ":p": "fi" }), ["g1", "g5", "g3"]);

    await expectValidation(
      () => games(" AND score > :x", { ":x": 50 }),
      "RANGE key attributes round must have equality conditions specified in the query because a condition is present on key attribute score",
    );
    await expectValidation(
      () =>
        query(table, {
          IndexName: "games",
          KeyConditionExpression: "#r = :r",
          ExpressionAttributeNames: { "#r": "region" },
          ExpressionAttributeValues: { ":r": "eu" },
        }),
      "Query condition missed key schema element: season",
    );
    await expectValidation(() => games("", {}, { ConsistentRead: true }), "Consistent reads are not supported on global secondary indexes");

    // LastEvaluatedKey carries every index component and the table key.
    const page = await query(table, {
      IndexName: "games",
      KeyConditionExpression: "#r = :r AND season = :s",
      ExpressionAttributeNames: { "#r": "region" },
      ExpressionAttributeValues: { ":r": "eu", ":s": 2026 },
      Limit: 2,
    });
    assert.deepEqual(page.LastEvaluatedKey, { pk: "g5", region: "eu", season: 2026, round: "final", score: 70 });

    // A wrong-typed component is refused.
    await expectValidation(
      () => ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "bad", region: "eu", season: "2026", round: "final", score: 1 } })),
      `${P}Type mismatch for Index Key season Expected: N Actual: S IndexName: games`,
    );

    const t = (await ctx.client.send(new DescribeTableCommand({ TableName: table }))).Table;
    assert.deepEqual(t.GlobalSecondaryIndexes[0].KeySchema.map((k) => [k.AttributeName, k.KeyType]), [
      ["region", "HASH"],
      ["season", "HASH"],
      ["round", "RANGE"],
      ["score", "RANGE"],
    ]);
    assert.equal(t.GlobalSecondaryIndexes[0].ItemCount, 6);
  });

  test("multi-attribute GSI: clause order is free, legacy KeyConditions follow the same prefix rule, filters and start keys", async () => {
    const table = await createTournament();
    const rows = [["g1", "final", 50], ["g2", "semi", 70], ["g3", "final", 90]];
    for (const [pk, round, score] of rows) {
      await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk, region: "eu", season: 2026, round, score } }));
    }
    const onGames = (params) => query(table, { IndexName: "games", ...params });
    const pks = (out) => out.Items.map((i) => i.pk);

    // Conditions in any order in the text.
    const shuffled = await onGames({
      KeyConditionExpression: "score = :x AND #rd = :f AND season = :s AND #r = :r",
      ExpressionAttributeNames: { "#r": "region", "#rd": "round" },
      ExpressionAttributeValues: { ":r": "eu", ":s": 2026, ":f": "final", ":x": 90 },
    });
    assert.deepEqual(pks(shuffled), ["g3"]);

    // Legacy KeyConditions.
    const eq = (v) => ({ ComparisonOperator: "EQ", AttributeValueList: [v] });
    const legacy = await onGames({
      KeyConditions: { region: eq("eu"), season: eq(2026), round: { ComparisonOperator: "BEGINS_WITH", AttributeValueList: ["fi"] } },
    });
    assert.deepEqual(pks(legacy), ["g1", "g3"]);
    await expectValidation(
      () => onGames({ KeyConditions: { region: eq("eu"), season: eq(2026), score: { ComparisonOperator: "GT", AttributeValueList: [1] } } }),
      "RANGE key attributes round must have equality conditions specified in the query because a condition is present on key attribute score",
    );

    // A filter may read the table key but no component of the queried index.
    const base = { KeyConditionExpression: "#r = :r AND season = :s", ExpressionAttributeNames: { "#r": "region" } };
    const byPk = await onGames({ ...base, FilterExpression: "pk = :p", ExpressionAttributeValues: { ":r": "eu", ":s": 2026, ":p": "g2" } });
    assert.deepEqual([pks(byPk), byPk.Count, byPk.ScannedCount], [["g2"], 1, 3]);
    await expectValidation(
      () => onGames({ ...base, FilterExpression: "score > :z", ExpressionAttributeValues: { ":r": "eu", ":s": 2026, ":z": 0 } }),
      "Filter Expression can only contain non-primary key attributes: Primary key attribute: score",
    );

    // ExclusiveStartKey needs every component and the table key.
    await expectValidation(
      () => onGames({ ...base, ExpressionAttributeValues: { ":r": "eu", ":s": 2026 }, ExclusiveStartKey: { pk: "g1", region: "eu", season: 2026, round: "final" } }),
      "The provided starting key is invalid",
    );

    // An empty string in a component, and a wrong-typed component inside a batch, refuse the write.
    await expectValidation(
      () => ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "e", region: "eu", season: 2026, round: "", score: 1 } })),
      "One or more parameter values are not valid. A value specified for a secondary index key is not supported. " +
        "The AttributeValue for a key attribute cannot contain an empty string value. IndexName: games, IndexKey: round",
    );
    await expectValidation(
      () =>
        batchWrite(ctx.doc, table, [
          { pk: "ok", region: "eu", season: 2026, round: "final", score: 1 },
          { pk: "bad", region: "eu", season: "2026", round: "final", score: 1 },
        ]),
      `${P}Type mismatch for Index Key season Expected: N Actual: S IndexName: games`,
    );
    assert.equal((await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "ok" } }))).Item, undefined, "the batch wrote nothing");
  });

  test("multi-attribute GSI key schemas: 4 HASH + 4 RANGE accepted in order; a 5th HASH refused", async () => {
    const names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    const defs = (n) => [{ AttributeName: "pk", AttributeType: "S" }, ...names.slice(0, n).map((AttributeName) => ({ AttributeName, AttributeType: "S" }))];
    const keys8 = [...names.slice(0, 4).map((a) => [a, "HASH"]), ...names.slice(4, 8).map((a) => [a, "RANGE"])];
    const table = await createIndexedTable({
      AttributeDefinitions: defs(8),
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
      GlobalSecondaryIndexes: [index("wide", keys8)],
    });
    const [g] = (await ctx.client.send(new DescribeTableCommand({ TableName: table }))).Table.GlobalSecondaryIndexes;
    assert.deepEqual(g.KeySchema.map((k) => [k.AttributeName, k.KeyType]), keys8);

    await expectValidation(
      () =>
        ctx.client.send(
          new CreateTableCommand({
            TableName: tableName("bad"),
            BillingMode: "PAY_PER_REQUEST",
            AttributeDefinitions: defs(5),
            KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
            GlobalSecondaryIndexes: [index("five", names.slice(0, 5).map((a) => [a, "HASH"]))],
          }),
        ),
      P + "The KeySchema exceeds the maximum allowed number of HASH key attributes",
    );
  });

  const CREATE_ERRORS = [
    ["an empty GSI list", P + "List of GlobalSecondaryIndexes is empty", { GlobalSecondaryIndexes: [] }],
    [
      "an LSI on a table without a range key",
      P + "Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex",
      { LocalSecondaryIndexes: [index("lsi", [["pk", "HASH"], ["g", "RANGE"]])] },
    ],
    [
      "a duplicate index name",
      P + "Duplicate index name: idx",
      { GlobalSecondaryIndexes: [index("idx", [["g", "HASH"]]), index("idx", [["g", "HASH"]])] },
    ],
    ["a projection without a type", P + "Unknown ProjectionType: null", { GlobalSecondaryIndexes: [index("idx", [["g", "HASH"]], {})] }],
    [
      "INCLUDE without NonKeyAttributes",
      P + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified",
      { GlobalSecondaryIndexes: [index("idx", [["g", "HASH"]], { ProjectionType: "INCLUDE" })] },
    ],
    [
      "ALL with NonKeyAttributes",
      P + "ProjectionType is ALL, but NonKeyAttributes is specified",
      { GlobalSecondaryIndexes: [index("idx", [["g", "HASH"]], { ProjectionType: "ALL", NonKeyAttributes: ["x"] })] },
    ],
    [
      "an attribute definition no key uses",
      P + "Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions",
      {},
    ],
    [
      "GSI throughput on an on-demand table",
      P + "ProvisionedThroughput should not be specified for index: idx when BillingMode is PAY_PER_REQUEST",
      {
        GlobalSecondaryIndexes: [
          index("idx", [["g", "HASH"]], { ProjectionType: "ALL" }, { ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 } }),
        ],
      },
    ],
  ];
  for (const [label, message, extra] of CREATE_ERRORS) {
    test(`CreateTable refuses ${label}`, async () => {
      const TableName = tableName("bad");
      await expectValidation(
        () =>
          ctx.client.send(
            new CreateTableCommand({
              TableName,
              AttributeDefinitions: [
                { AttributeName: "pk", AttributeType: "S" },
                { AttributeName: "g", AttributeType: "S" },
              ],
              KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
              BillingMode: "PAY_PER_REQUEST",
              ...extra,
            }),
          ),
        message,
      );
      await expectError(() => ctx.client.send(new DescribeTableCommand({ TableName })), "ResourceNotFoundException");
    });
  }

  test("a provisioned GSI with 1 WCU throttles base-table writes with IndexWriteProvisionedThroughputExceeded", async () => {
    const table = await createIndexedTable({
      BillingMode: "PROVISIONED",
      ProvisionedThroughput: { ReadCapacityUnits: 100, WriteCapacityUnits: 1000 },
      AttributeDefinitions: [
        { AttributeName: "pk", AttributeType: "S" },
        { AttributeName: "g", AttributeType: "S" },
      ],
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
      GlobalSecondaryIndexes: [
        index("narrow", [["g", "HASH"]], { ProjectionType: "ALL" }, { ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 } }),
      ],
    });
    const arn = (await ctx.client.send(new DescribeTableCommand({ TableName: table }))).Table.TableArn;
    // Items without g never touch the GSI: the table's 1,000 WCU absorb them.
    for (let i = 0; i < 50; i++) {
      await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: `free${i}` } }));
    }
    let err;
    let i = 0;
    for (; i < 400; i++) {
      try {
        await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: `k${i}`, g: "hot" } }));
      } catch (e) {
        err = e;
        break;
      }
    }
    assert.ok(err, "a 1 WCU GSI cannot take 400 writes at once");
    assert.equal(err.name, "ProvisionedThroughputExceededException", `got ${err.name}: ${err.message}`);
    assert.equal(err.$metadata.httpStatusCode, 400);
    assert.deepEqual(err.ThrottlingReasons, [{ reason: "IndexWriteProvisionedThroughputExceeded", resource: `${arn}/index/narrow` }]);
    // The refused write is not in the table.
    assert.equal((await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: `k${i}` } }))).Item, undefined);
  });

  test("UpdateTable GlobalSecondaryIndexUpdates errors: empty list or element, two actions on one index, existing name, definitions", async () => {
    const table = await createOrders();
    const update = (params) => ctx.client.send(new UpdateTableCommand({ TableName: table, ...params }));
    const statusGsi = (IndexName) => ({ Create: index(IndexName, [["status", "HASH"]]) });
    await expectValidation(
      () => update({ GlobalSecondaryIndexUpdates: [] }),
      // DynamoDB's 2026 list, without the member the request holds.
      "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required",
    );
    await expectValidation(
      () => update({ GlobalSecondaryIndexUpdates: [{}] }),
      P + "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null",
    );
    await expectValidation(
      () =>
        update({
          GlobalSecondaryIndexUpdates: [
            { Delete: { IndexName: "by_status" } },
            { Update: { IndexName: "by_status", ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 } } },
          ],
        }),
      P + "Only one global secondary index update per index is allowed simultaneously. Index: by_status",
    );
    await expectValidation(
      () => update({ AttributeDefinitions: [{ AttributeName: "status", AttributeType: "S" }], GlobalSecondaryIndexUpdates: [statusGsi("by_status")] }),
      "Attempting to create an index which already exists",
    );
    // The key's definition must come in this request, even though the table already has it.
    await expectValidation(
      () => update({ GlobalSecondaryIndexUpdates: [statusGsi("by_status2")] }),
      P + "AttributeDefinitions is not specified for index: by_status2",
    );
    await expectValidation(
      () => update({ AttributeDefinitions: [{ AttributeName: "status", AttributeType: "N" }], GlobalSecondaryIndexUpdates: [statusGsi("by_status3")] }),
      P +
        "Attributes cannot be redefined. Please check that your attribute has the same type as previously defined. " +
        "Existing schema: status:S New schema: status:N",
    );
    const t = (await ctx.client.send(new DescribeTableCommand({ TableName: table }))).Table;
    assert.deepEqual(t.GlobalSecondaryIndexes.map((g) => g.IndexName).sort(), ["by_customer", "by_status"], "nothing changed");
  });

  test("a GSI still backfilling refuses Query and Scan", async () => {
    // 25 items for a 1 WCU index: the backfill outlasts the requests below.
    const table = await createIndexedTable({
      BillingMode: "PROVISIONED",
      ProvisionedThroughput: { ReadCapacityUnits: 100, WriteCapacityUnits: 1000 },
      AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
    });
    await batchPut(ctx.doc, table, Array.from({ length: 25 }, (_, i) => ({ pk: `k${i}`, g: "x" })));
    const out = await ctx.client.send(
      new UpdateTableCommand({
        TableName: table,
        AttributeDefinitions: [{ AttributeName: "g", AttributeType: "S" }],
        GlobalSecondaryIndexUpdates: [
          { Create: index("slow", [["g", "HASH"]], { ProjectionType: "ALL" }, { ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 } }) },
        ],
      }),
    );
    const [g] = out.TableDescription.GlobalSecondaryIndexes;
    assert.deepEqual([g.IndexName, g.IndexStatus, g.Backfilling], ["slow", "CREATING", true]);
    assert.deepEqual(g.ProvisionedThroughput.WriteCapacityUnits, 1);
    await expectValidation(
      () => query(table, { IndexName: "slow", KeyConditionExpression: "g = :g", ExpressionAttributeValues: { ":g": "x" } }),
      "Cannot read from backfilling global secondary index: slow",
    );
    await expectValidation(
      () => ctx.doc.send(new ScanCommand({ TableName: table, IndexName: "slow" })),
      "Cannot read from backfilling global secondary index: slow",
    );
    // A second online index change waits for this one.
    await expectError(
      () =>
        ctx.client.send(
          new UpdateTableCommand({
            TableName: table,
            AttributeDefinitions: [{ AttributeName: "other", AttributeType: "S" }],
            GlobalSecondaryIndexUpdates: [
              { Create: index("by_other", [["other", "HASH"]], { ProjectionType: "ALL" }, { ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 } }) },
            ],
          }),
        ),
      "LimitExceededException",
      "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    );
  });

  test("ReturnItemCollectionMetrics SIZE on a table with an LSI; a GSI query may filter on the table's sort key but not on its own key", async () => {
    const table = await createOrders();
    const out = await ctx.doc.send(
      new PutCommand({ TableName: table, Item: order("a", { status: "open", amount: 3 }), ReturnItemCollectionMetrics: "SIZE" }),
    );
    assert.deepEqual(out.ItemCollectionMetrics, { ItemCollectionKey: { pk: "u1" }, SizeEstimateRangeGB: [0, 1] });
    await ctx.doc.send(new PutCommand({ TableName: table, Item: order("b", { status: "open", amount: 4 }) }));
    const filtered = await byStatus(table, "open", { FilterExpression: "sk = :b", ExpressionAttributeValues: { ":s": "open", ":b": "b" } });
    assert.deepEqual(sks(filtered), ["b"]);
    assert.deepEqual([filtered.Count, filtered.ScannedCount], [1, 2]);
    await expectValidation(
      () => byStatus(table, "open", { FilterExpression: "amount > :z", ExpressionAttributeValues: { ":s": "open", ":z": 0 } }),
      "Filter Expression can only contain non-primary key attributes: Primary key attribute: amount",
    );
    // A put that drops the GSI key still charges the index for the delete.
    const dropped = await ctx.doc.send(new PutCommand({ TableName: table, Item: order("b", { amount: 4 }), ReturnConsumedCapacity: "INDEXES" }));
    assert.deepEqual(dropped.ConsumedCapacity.GlobalSecondaryIndexes, { by_status: { CapacityUnits: 1 } });
  });

  test("UpdateTable creates a GSI (CREATING/Backfilling, then ACTIVE with the backfilled items) and deletes it", async () => {
    const table = await createIndexedTable({
      AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
    });
    await batchPut(ctx.doc, table, Array.from({ length: 6 }, (_, i) => ({ pk: `k${i}`, team: i % 2 ? "red" : "blue" })));
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "odd", team: 7 } })); // wrong type: skipped by the backfill
    const redTeam = () => query(table, { IndexName: "by_team", KeyConditionExpression: "team = :t", ExpressionAttributeValues: { ":t": "red" } });

    const out = (
      await ctx.client.send(
        new UpdateTableCommand({
          TableName: table,
          AttributeDefinitions: [{ AttributeName: "team", AttributeType: "S" }],
          GlobalSecondaryIndexUpdates: [{ Create: index("by_team", [["team", "HASH"]]) }],
        }),
      )
    ).TableDescription;
    assert.equal(out.GlobalSecondaryIndexes.length, 1);
    const [created] = out.GlobalSecondaryIndexes;
    assert.deepEqual([created.IndexName, created.IndexStatus, created.Backfilling], ["by_team", "CREATING", true]);
    assert.ok(
      out.AttributeDefinitions.some((d) => d.AttributeName === "team" && d.AttributeType === "S"),
      JSON.stringify(out.AttributeDefinitions),
    );

    const desc = await waitIndexActive(table, "by_team");
    assert.deepEqual([desc.IndexStatus, desc.Backfilling, desc.ItemCount], ["ACTIVE", undefined, 6]);
    const red = await redTeam();
    assert.deepEqual(red.Items.map((i) => i.pk).sort(), ["k1", "k3", "k5"]);

    // Now a wrong-typed write is refused.
    await expectValidation(
      () => ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "odd2", team: 1 } })),
      `${P}Type mismatch for Index Key team Expected: S Actual: N IndexName: by_team`,
    );
    await expectError(
      () => ctx.client.send(new UpdateTableCommand({ TableName: table, GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: "nope" } }] })),
      "ResourceNotFoundException",
      `Requested resource not found: Index nope for table ${table}`,
    );
    await expectError(
      () =>
        ctx.client.send(
          new UpdateTableCommand({
            TableName: table,
            AttributeDefinitions: [
              { AttributeName: "a", AttributeType: "S" },
              { AttributeName: "b", AttributeType: "S" },
            ],
            GlobalSecondaryIndexUpdates: [{ Create: index("by_aaa", [["a", "HASH"]]) }, { Create: index("by_bbb", [["b", "HASH"]]) }],
          }),
        ),
      "LimitExceededException",
      "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    );

    const deleted = await ctx.client.send(new UpdateTableCommand({ TableName: table, GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: "by_team" } }] }));
    assert.equal(deleted.TableDescription.GlobalSecondaryIndexes, undefined);
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "odd2", team: 1 } })); // no index constrains team any more
    await expectValidation(() => redTeam(), "The table does not have the specified index: by_team");
  });
});
