// TransactWriteItems / TransactGetItems.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { GetCommand, PutCommand, TransactGetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";

import { createTable, expectError, expectValidation, useServer } from "./lib/server.js";

let table;

const ctx = useServer(async () => {
  table = await createTable(ctx.client);
});

/** A ConditionCheck action: item `pk` has state "open". */
const stateIsOpen = (pk) => ({
  ConditionCheck: {
    TableName: table,
    Key: { pk },
    ConditionExpression: "#s = :open",
    ExpressionAttributeNames: { "#s": "state" },
    ExpressionAttributeValues: { ":open": "open" },
  },
});

const transactWrite = (TransactItems, extra = {}) => ctx.doc.send(new TransactWriteCommand({ TransactItems, ...extra }));

const get = async (pk) =>
  (await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }))).Item;

describe("transactions", () => {
  test("TransactWriteItems applies Put + Update + Delete with a passing ConditionCheck", async () => {
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "tx-guard", state: "open" } }));
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "tx-counter", n: 10 } }));
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "tx-old", v: 1 } }));

    const out = await transactWrite(
      [
        stateIsOpen("tx-guard"),
        { Put: { TableName: table, Item: { pk: "tx-new", v: new Set(["a"]) } } },
        {
          Update: {
            TableName: table,
            Key: { pk: "tx-counter" },
            UpdateExpression: "SET n = n - :d",
            ExpressionAttributeValues: { ":d": 3 },
          },
        },
        { Delete: { TableName: table, Key: { pk: "tx-old" } } },
      ],
      { ReturnConsumedCapacity: "TOTAL" },
    );
    assert.equal(out.$metadata.httpStatusCode, 200);
    assert.ok(Array.isArray(out.ConsumedCapacity));
    assert.equal(out.ConsumedCapacity[0].TableName, table);
    // 4 small items, each costing 2 units in a transaction (a ConditionCheck included).
    assert.equal(out.ConsumedCapacity[0].CapacityUnits, 8);

    assert.deepEqual(await get("tx-new"), { pk: "tx-new", v: new Set(["a"]) });
    assert.deepEqual(await get("tx-counter"), { pk: "tx-counter", n: 7 });
    assert.equal(await get("tx-old"), undefined);
    assert.deepEqual(await get("tx-guard"), { pk: "tx-guard", state: "open" });
  });

  test("failing ConditionCheck -> TransactionCanceledException with reasons in request order, nothing applied", async () => {
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "cc-guard", state: "closed" } }));
    const err = await expectError(
      () => transactWrite([{ Put: { TableName: table, Item: { pk: "cc-put", v: 1 } } }, stateIsOpen("cc-guard")]),
      "TransactionCanceledException",
      "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]",
    );
    assert.equal(err.$metadata.httpStatusCode, 400);
    assert.ok(Array.isArray(err.CancellationReasons), "CancellationReasons must be a list");
    assert.equal(err.CancellationReasons.length, 2);
    assert.deepEqual(err.CancellationReasons[0], { Code: "None" });
    assert.equal(err.CancellationReasons[1].Code, "ConditionalCheckFailed");
    assert.match(err.CancellationReasons[1].Message, /^The conditional request failed\.?$/);
    assert.equal(err.CancellationReasons[1].Item, undefined, "no Item unless ReturnValuesOnConditionCheckFailure");

    assert.equal(await get("cc-put"), undefined, "the Put of a cancelled transaction must not be applied");
  });

  test("ReturnValuesOnConditionCheckFailure ALL_OLD puts the item in the cancellation reason", async () => {
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "rv-guard", n: 1 } }));
    const err = await expectError(
      () =>
        transactWrite([
          {
            Update: {
              TableName: table,
              Key: { pk: "rv-guard" },
              UpdateExpression: "SET n = :two",
              ConditionExpression: "n = :zero",
              ExpressionAttributeValues: { ":two": 2, ":zero": 0 },
              ReturnValuesOnConditionCheckFailure: "ALL_OLD",
            },
          },
          { Put: { TableName: table, Item: { pk: "rv-other" } } },
        ]),
      "TransactionCanceledException",
    );
    assert.deepEqual(
      err.CancellationReasons.map((r) => r.Code),
      ["ConditionalCheckFailed", "None"],
    );
    // The document client leaves exceptions alone, so the Item is in wire form.
    assert.deepEqual(err.CancellationReasons[0].Item, { pk: { S: "rv-guard" }, n: { N: "1" } });
    assert.deepEqual(await get("rv-guard"), { pk: "rv-guard", n: 1 });
  });

  test("a wrong-typed key cancels with a ValidationError reason; an empty one refuses the request", async () => {
    // The captured shapes of CONF tier3/error-messages transactWriteItems (real AWS, eu-west-2).
    const err = await expectError(
      () =>
        transactWrite([
          { Put: { TableName: table, Item: { pk: "wt-ok" } } },
          { Delete: { TableName: table, Key: { pk: 5 } } },
        ]),
      "TransactionCanceledException",
      "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ValidationError]",
    );
    assert.deepEqual(err.CancellationReasons, [
      { Code: "None" },
      { Code: "ValidationError", Message: "The provided key element does not match the schema" },
    ]);
    await expectValidation(
      () => transactWrite([{ Put: { TableName: table, Item: { pk: "" } } }]),
      "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: pk",
    );
    assert.equal(await get("wt-ok"), undefined, "nothing of a cancelled transaction is applied");
  });

  test("two actions on the same item -> ValidationException", async () => {
    await expectValidation(
      () =>
        transactWrite([
          { Put: { TableName: table, Item: { pk: "same", v: 1 } } },
          { Delete: { TableName: table, Key: { pk: "same" } } },
        ]),
      "Transaction request cannot include multiple operations on one item",
    );
  });

  test("TransactGetItems returns responses in request order, empty entry for a missing item", async () => {
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "tg-1", v: "one", extra: true } }));
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "tg-2", v: "two" } }));
    const out = await ctx.doc.send(
      new TransactGetCommand({
        TransactItems: [
          { Get: { TableName: table, Key: { pk: "tg-2" } } },
          { Get: { TableName: table, Key: { pk: "tg-missing" } } },
          { Get: { TableName: table, Key: { pk: "tg-1" }, ProjectionExpression: "v" } },
        ],
      }),
    );
    assert.equal(out.Responses.length, 3);
    assert.deepEqual(out.Responses[0].Item, { pk: "tg-2", v: "two" });
    assert.equal(out.Responses[1].Item, undefined);
    assert.deepEqual(out.Responses[2].Item, { v: "one" });
  });
});
