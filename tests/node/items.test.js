// Single-item operations through DynamoDBDocumentClient: marshalling
// round-trips, UpdateItem, DeleteItem, conditions, consumed capacity.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { GetItemCommand as RawGetItemCommand, PutItemCommand as RawPutItemCommand } from "@aws-sdk/client-dynamodb";
import {
  DeleteCommand,
  GetCommand,
  NumberValue,
  PutCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";

import { createTable, expectError, makeClient, makeDocClient, useServer } from "./lib/server.js";

let table;

const ctx = useServer(async () => {
  table = await createTable(ctx.client);
});

describe("items through DynamoDBDocumentClient", () => {
  test("scalars round-trip: strings, numbers, booleans, null, binary", async () => {
    const item = {
      pk: "scalars",
      s: "héllo wörld ✓",
      empty: "",
      int: 42,
      neg: -17,
      zero: 0,
      float: 3.14159,
      small: 0.000001,
      big: 9007199254740991, // Number.MAX_SAFE_INTEGER
      t: true,
      f: false,
      nothing: null,
      bin: new Uint8Array([0, 1, 2, 253, 254, 255]),
    };
    await ctx.doc.send(new PutCommand({ TableName: table, Item: item }));
    const out = await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "scalars" }, ConsistentRead: true }));
    assert.ok(out.Item.bin instanceof Uint8Array, "B should unmarshal to a Uint8Array");
    assert.deepEqual(Array.from(out.Item.bin), [0, 1, 2, 253, 254, 255]);
    assert.deepEqual({ ...out.Item, bin: null }, { ...item, bin: null });

    // Wire types as seen by the low-level client.
    const raw = await ctx.client.send(
      new RawGetItemCommand({ TableName: table, Key: { pk: { S: "scalars" } }, ConsistentRead: true }),
    );
    assert.deepEqual(raw.Item.int, { N: "42" });
    assert.deepEqual(raw.Item.float, { N: "3.14159" });
    assert.deepEqual(raw.Item.small, { N: "0.000001" });
    assert.deepEqual(raw.Item.t, { BOOL: true });
    assert.deepEqual(raw.Item.nothing, { NULL: true });
    assert.deepEqual(raw.Item.empty, { S: "" });
  });

  test("sets round-trip as Sets (SS, NS, BS) and are typed as sets on the wire", async () => {
    const item = {
      pk: "sets",
      ss: new Set(["a", "b", "zeta", "ü"]),
      ns: new Set([1, 2.5, -3, 1000000]),
      bs: new Set([new Uint8Array([1]), new Uint8Array([2, 3]), new Uint8Array([255])]),
    };
    await ctx.doc.send(new PutCommand({ TableName: table, Item: item }));
    const out = await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "sets" }, ConsistentRead: true }));
    assert.ok(out.Item.ss instanceof Set);
    assert.ok(out.Item.ns instanceof Set);
    assert.ok(out.Item.bs instanceof Set);
    assert.deepEqual(out.Item.ss, item.ss);
    assert.deepEqual(out.Item.ns, item.ns);
    assert.deepEqual(
      [...out.Item.bs].map((b) => Array.from(b)).sort(),
      [[1], [2, 3], [255]].sort(),
    );

    const raw = await ctx.client.send(
      new RawGetItemCommand({ TableName: table, Key: { pk: { S: "sets" } }, ConsistentRead: true }),
    );
    assert.deepEqual([...raw.Item.ss.SS].sort(), ["a", "b", "zeta", "ü"].sort());
    assert.deepEqual([...raw.Item.ns.NS].sort(), ["-3", "1", "1000000", "2.5"]);
    assert.equal(raw.Item.bs.BS.length, 3);
  });

  test("nested maps and lists round-trip exactly", async () => {
    const item = {
      pk: "nested",
      doc: {
        name: "widget",
        dims: [1, 2.5, { unit: "cm", tags: ["x", "y"] }],
        meta: { empty_map: {}, empty_list: [], deep: { deeper: { deepest: [null, true, "z", [0]] } } },
        blob: new Uint8Array([9, 8, 7]),
        tagset: new Set(["red", "blue"]),
      },
      list: [[], [[]], [{ a: 1 }, { b: [2, 3] }], "end"],
    };
    await ctx.doc.send(new PutCommand({ TableName: table, Item: item }));
    const out = await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "nested" }, ConsistentRead: true }));
    assert.deepEqual(Array.from(out.Item.doc.blob), [9, 8, 7]);
    const strip = (it) => ({ ...it, doc: { ...it.doc, blob: null } });
    assert.deepEqual(strip(out.Item), strip(item));
  });

  test("38-digit and canonicalised numbers (NumberValue / raw N)", async () => {
    const digits38 = "12345678901234567890123456789012345678";
    const negFrac = "-0.0000000000000000000000000000000000001";
    await ctx.doc.send(
      new PutCommand({
        TableName: table,
        Item: { pk: "bignum", big: NumberValue.from(digits38), negFrac: NumberValue.from(negFrac) },
      }),
    );
    // A separate base client: DynamoDBDocumentClient.from() stores its
    // translate config on the base client's config, so sharing ctx.client
    // would switch wrapNumbers on for every other test.
    const base = makeClient(ctx.endpoint);
    const wrapped = makeDocClient(base, { wrapNumbers: true });
    const out = await wrapped.send(new GetCommand({ TableName: table, Key: { pk: "bignum" }, ConsistentRead: true }));
    base.destroy();
    assert.ok(out.Item.big instanceof NumberValue);
    assert.equal(out.Item.big.toString(), digits38);
    assert.equal(out.Item.negFrac.toString(), negFrac);

    // DynamoDB returns numbers in canonical form.
    await ctx.client.send(
      new RawPutItemCommand({
        TableName: table,
        Item: { pk: { S: "canon" }, a: { N: "1.50" }, b: { N: "0010" }, c: { N: "1E2" }, d: { N: "-0" } },
      }),
    );
    const raw = await ctx.client.send(
      new RawGetItemCommand({ TableName: table, Key: { pk: { S: "canon" } }, ConsistentRead: true }),
    );
    assert.deepEqual(
      { a: raw.Item.a, b: raw.Item.b, c: raw.Item.c, d: raw.Item.d },
      { a: { N: "1.5" }, b: { N: "10" }, c: { N: "100" }, d: { N: "0" } },
    );
  });

  test("UpdateItem SET / ADD / REMOVE / list_append with ReturnValues ALL_NEW", async () => {
    await ctx.doc.send(
      new PutCommand({
        TableName: table,
        Item: { pk: "upd", count: 5, tags: new Set(["a"]), gone: "x", list: [1], nested: { n: 1 } },
      }),
    );
    const out = await ctx.doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: "upd" },
        UpdateExpression:
          "SET #nm = :name, nested.n = nested.n + :one, #l = list_append(#l, :more) ADD #c :one, tags :newtags REMOVE gone",
        ExpressionAttributeNames: { "#nm": "name", "#l": "list", "#c": "count" },
        ExpressionAttributeValues: { ":name": "updated", ":one": 1, ":more": [2, 3], ":newtags": new Set(["b", "c"]) },
        ReturnValues: "ALL_NEW",
      }),
    );
    assert.deepEqual(out.Attributes, {
      pk: "upd",
      name: "updated",
      count: 6,
      tags: new Set(["a", "b", "c"]),
      list: [1, 2, 3],
      nested: { n: 2 },
    });
    const got = await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "upd" }, ConsistentRead: true }));
    assert.deepEqual(got.Item, out.Attributes);
  });

  test("UpdateItem UPDATED_OLD returns only changed attributes' old values; a missing item is created", async () => {
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "updold", a: 1, b: "keep", c: "old" } }));
    const out = await ctx.doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: "updold" },
        UpdateExpression: "SET a = a + :d, c = :c",
        ExpressionAttributeValues: { ":d": 10, ":c": "new" },
        ReturnValues: "UPDATED_OLD",
      }),
    );
    assert.deepEqual(out.Attributes, { a: 1, c: "old" });

    // On a missing item, UpdateItem creates it (ADD on absent attributes).
    const up = await ctx.doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: "upsert" },
        UpdateExpression: "ADD hits :one, seen :s SET #f = if_not_exists(#f, :now)",
        ExpressionAttributeNames: { "#f": "first" },
        ExpressionAttributeValues: { ":one": 1, ":s": new Set([7]), ":now": "t0" },
        ReturnValues: "ALL_NEW",
      }),
    );
    assert.deepEqual(up.Attributes, { pk: "upsert", hits: 1, seen: new Set([7]), first: "t0" });
  });

  test("DeleteItem with ALL_OLD returns the old item; GetItem then has no Item", async () => {
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "del", v: [1, "two"] } }));
    const out = await ctx.doc.send(new DeleteCommand({ TableName: table, Key: { pk: "del" }, ReturnValues: "ALL_OLD" }));
    assert.deepEqual(out.Attributes, { pk: "del", v: [1, "two"] });
    const got = await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "del" }, ConsistentRead: true }));
    assert.equal(got.Item, undefined);
    assert.equal(got.$metadata.httpStatusCode, 200);

    // Deleting a missing item succeeds and returns no Attributes.
    const again = await ctx.doc.send(new DeleteCommand({ TableName: table, Key: { pk: "del" }, ReturnValues: "ALL_OLD" }));
    assert.equal(again.Attributes, undefined);
  });

  test("conditional put failure -> ConditionalCheckFailedException, item unchanged", async () => {
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "cond", v: 1 } }));
    const err = await expectError(
      () => ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "cond", v: 2 }, ConditionExpression: "attribute_not_exists(pk)" })),
      "ConditionalCheckFailedException",
      "The conditional request failed",
    );
    assert.equal(err.$metadata.httpStatusCode, 400);
    assert.equal(err.Item, undefined, "no Item without ReturnValuesOnConditionCheckFailure");

    const got = await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "cond" }, ConsistentRead: true }));
    assert.deepEqual(got.Item, { pk: "cond", v: 1 });
  });

  test("ReturnValuesOnConditionCheckFailure ALL_OLD puts the old item on the exception", async () => {
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "condold", v: 7, s: "x" } }));
    const err = await expectError(
      () =>
        ctx.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { pk: "condold" },
            UpdateExpression: "SET v = :n",
            ConditionExpression: "v = :expected",
            ExpressionAttributeValues: { ":n": 8, ":expected": 100 },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        ),
      "ConditionalCheckFailedException",
    );
    // The exception's Item is not unmarshalled by the document client.
    assert.deepEqual(err.Item, { pk: { S: "condold" }, v: { N: "7" }, s: { S: "x" } });
  });

  test("ReturnConsumedCapacity TOTAL: small put 1 WCU, strong get 1, eventual get 0.5; 2.5 KB put 3 WCU", async () => {
    const put = await ctx.doc.send(
      new PutCommand({ TableName: table, Item: { pk: "cap", v: "small" }, ReturnConsumedCapacity: "TOTAL" }),
    );
    assert.equal(put.ConsumedCapacity?.TableName, table);
    assert.equal(put.ConsumedCapacity.CapacityUnits, 1);

    const strong = await ctx.doc.send(
      new GetCommand({ TableName: table, Key: { pk: "cap" }, ConsistentRead: true, ReturnConsumedCapacity: "TOTAL" }),
    );
    assert.equal(strong.ConsumedCapacity?.TableName, table);
    assert.equal(strong.ConsumedCapacity.CapacityUnits, 1);

    const eventual = await ctx.doc.send(
      new GetCommand({ TableName: table, Key: { pk: "cap" }, ReturnConsumedCapacity: "TOTAL" }),
    );
    assert.equal(eventual.ConsumedCapacity?.TableName, table);
    assert.equal(eventual.ConsumedCapacity.CapacityUnits, 0.5);

    // Without ReturnConsumedCapacity, nothing is returned.
    const none = await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "cap", v: "again" } }));
    assert.equal(none.ConsumedCapacity, undefined);

    // A 2.5 KB item: ceil(2510/1024) = 3 WCU to write, ceil(2510/4096) = 1 RCU to read.
    const put2 = await ctx.doc.send(
      new PutCommand({
        TableName: table,
        Item: { pk: "cap2", data: "x".repeat(2500) },
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    assert.equal(put2.ConsumedCapacity.CapacityUnits, 3);
    const get2 = await ctx.doc.send(
      new GetCommand({ TableName: table, Key: { pk: "cap2" }, ConsistentRead: true, ReturnConsumedCapacity: "TOTAL" }),
    );
    assert.equal(get2.ConsumedCapacity.CapacityUnits, 1);
  });
});
