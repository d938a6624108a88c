// BatchWriteItem / BatchGetItem.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { BatchGetCommand, BatchWriteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";

import { createTable, expectError, expectValidation, useServer } from "./lib/server.js";

let table;
let table2;

const ctx = useServer(async () => {
  table = await createTable(ctx.client, { rangeType: "N" });
  table2 = await createTable(ctx.client);
});

const byKey = (a, b) => (a.pk === b.pk ? a.sk - b.sk : a.pk < b.pk ? -1 : 1);

describe("batch operations", () => {
  test("BatchWriteItem of 25 puts: UnprocessedItems empty; BatchGetItem reads all 25 back", async () => {
    const items = Array.from({ length: 25 }, (_, i) => ({
      pk: "bw",
      sk: i,
      payload: `item-${i}`,
      tags: new Set([`t${i}`, "all"]),
      nested: { i, even: i % 2 === 0 },
    }));
    const w = await ctx.doc.send(
      new BatchWriteCommand({
        RequestItems: { [table]: items.map((Item) => ({ PutRequest: { Item } })) },
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    assert.deepEqual(w.UnprocessedItems, {});
    assert.ok(Array.isArray(w.ConsumedCapacity), "batch ConsumedCapacity is a list");
    assert.equal(w.ConsumedCapacity.length, 1);
    assert.equal(w.ConsumedCapacity[0].TableName, table);
    assert.equal(w.ConsumedCapacity[0].CapacityUnits, 25, "each small item rounds up to 1 WCU");

    const g = await ctx.doc.send(
      new BatchGetCommand({
        RequestItems: { [table]: { Keys: items.map(({ pk, sk }) => ({ pk, sk })), ConsistentRead: true } },
      }),
    );
    assert.deepEqual(g.UnprocessedKeys, {});
    assert.deepEqual(Object.keys(g.Responses), [table]);
    assert.equal(g.Responses[table].length, 25);
    assert.deepEqual([...g.Responses[table]].sort(byKey), items);
  });

  test("BatchWriteItem mixes puts and deletes across two tables; BatchGetItem omits missing keys", async () => {
    await ctx.doc.send(new PutCommand({ TableName: table2, Item: { pk: "doomed", v: 1 } }));
    const w = await ctx.doc.send(
      new BatchWriteCommand({
        RequestItems: {
          [table]: [
            { PutRequest: { Item: { pk: "mix", sk: 1, v: "one" } } },
            { PutRequest: { Item: { pk: "mix", sk: 2, v: "two" } } },
          ],
          [table2]: [
            { DeleteRequest: { Key: { pk: "doomed" } } },
            { DeleteRequest: { Key: { pk: "never-existed" } } },
            { PutRequest: { Item: { pk: "fresh", v: 2 } } },
          ],
        },
      }),
    );
    assert.deepEqual(w.UnprocessedItems, {});

    const gone = await ctx.doc.send(new GetCommand({ TableName: table2, Key: { pk: "doomed" }, ConsistentRead: true }));
    assert.equal(gone.Item, undefined);

    const g = await ctx.doc.send(
      new BatchGetCommand({
        RequestItems: {
          [table]: { Keys: [{ pk: "mix", sk: 1 }, { pk: "mix", sk: 2 }, { pk: "mix", sk: 3 }] },
          [table2]: { Keys: [{ pk: "fresh" }, { pk: "doomed" }], ProjectionExpression: "v" },
        },
      }),
    );
    assert.deepEqual(g.UnprocessedKeys, {});
    assert.deepEqual([...g.Responses[table]].sort(byKey), [
      { pk: "mix", sk: 1, v: "one" },
      { pk: "mix", sk: 2, v: "two" },
    ]);
    assert.deepEqual(g.Responses[table2], [{ v: 2 }]);
  });

  test("BatchWriteItem with 26 requests -> ValidationException (whole batch rejected)", async () => {
    const reqs = Array.from({ length: 26 }, (_, i) => ({ PutRequest: { Item: { pk: "over", sk: i } } }));
    const err = await expectError(
      () => ctx.doc.send(new BatchWriteCommand({ RequestItems: { [table]: reqs } })),
      "ValidationException",
      /Member must have length less than or equal to 25/,
    );
    assert.equal(err.$metadata.httpStatusCode, 400);

    const got = await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "over", sk: 0 }, ConsistentRead: true }));
    assert.equal(got.Item, undefined, "no part of a rejected batch may be written");
  });

  test("duplicate keys in BatchWriteItem (put + delete) and BatchGetItem -> ValidationException", async () => {
    const put = { PutRequest: { Item: { pk: "dup", sk: 1, v: 1 } } };
    const del = { DeleteRequest: { Key: { pk: "dup", sk: 1 } } };
    await expectValidation(
      () => ctx.doc.send(new BatchWriteCommand({ RequestItems: { [table]: [put, del] } })),
      "Provided list of item keys contains duplicates",
    );
    const keys = [{ pk: "bw", sk: 1 }, { pk: "bw", sk: 1 }];
    await expectValidation(
      () => ctx.doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys } } })),
      "Provided list of item keys contains duplicates",
    );
  });
});
