// Error surfaces: names, HTTP status and exact messages as the JS SDK sees
// them.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";

import { createTable, expectError, tableName, useServer } from "./lib/server.js";

let table; // pk S + sk N

const ctx = useServer(async () => {
  table = await createTable(ctx.client, { rangeType: "N" });
});

describe("errors", () => {
  test("GetItem with a wrong key name, a missing range key or a wrongly typed key -> key schema ValidationException", async () => {
    const err = await expectError(() =>
      ctx.doc.send(new GetCommand({ TableName: table, Key: { id: "x", sk: 1 } })),
    );
    assert.equal(err.name, "ValidationException");
    assert.equal(err.message, "The provided key element does not match the schema");
    assert.equal(err.$metadata.httpStatusCode, 400);
    assert.equal(err.$fault, "client");

    const missingRange = await expectError(() => ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "x" } })));
    assert.equal(missingRange.name, "ValidationException");
    assert.equal(missingRange.message, "The provided key element does not match the schema");

    const wrongType = await expectError(() =>
      ctx.client.send(new GetItemCommand({ TableName: table, Key: { pk: { S: "x" }, sk: { S: "1" } } })),
    );
    assert.equal(wrongType.name, "ValidationException");
    assert.equal(wrongType.message, "The provided key element does not match the schema");
  });

  test("PutItem without the range key / with a wrongly typed key -> ValidationException", async () => {
    const err = await expectError(() => ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "x", v: 1 } })));
    assert.equal(err.name, "ValidationException");
    assert.equal(err.message, "One or more parameter values were invalid: Missing the key sk in the item");

    const err2 = await expectError(() =>
      ctx.client.send(new PutItemCommand({ TableName: table, Item: { pk: { S: "x" }, sk: { S: "one" } } })),
    );
    assert.equal(err2.name, "ValidationException");
    assert.equal(err2.message, "One or more parameter values were invalid: Type mismatch for key sk expected: N actual: S");
  });

  test("operations on a missing table -> ResourceNotFoundException", async () => {
    const name = tableName("nosuch");
    const err = await expectError(() => ctx.doc.send(new PutCommand({ TableName: name, Item: { pk: "x" } })));
    assert.equal(err.name, "ResourceNotFoundException");
    assert.equal(err.$metadata.httpStatusCode, 400);
    assert.match(err.message, /^Requested resource not found/);

    const err2 = await expectError(() => ctx.doc.send(new GetCommand({ TableName: name, Key: { pk: "x" } })));
    assert.equal(err2.name, "ResourceNotFoundException");
  });

  test("UpdateItem that sets a key attribute -> 'Cannot update attribute pk'", async () => {
    const err = await expectError(() =>
      ctx.doc.send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: "k", sk: 1 },
          UpdateExpression: "SET pk = :v",
          ExpressionAttributeValues: { ":v": "other" },
        }),
      ),
    );
    assert.equal(err.name, "ValidationException");
    assert.equal(
      err.message,
      "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key",
    );
  });

  test("expression errors: UpdateExpression syntax error, unused ExpressionAttributeValues", async () => {
    const err = await expectError(() =>
      ctx.doc.send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: "k", sk: 1 },
          UpdateExpression: "SET = :v",
          ExpressionAttributeValues: { ":v": 1 },
        }),
      ),
    );
    assert.equal(err.name, "ValidationException");
    assert.match(err.message, /^Invalid UpdateExpression: /);

    const err2 = await expectError(() =>
      ctx.doc.send(
        new PutCommand({
          TableName: table,
          Item: { pk: "k", sk: 1 },
          ConditionExpression: "attribute_not_exists(pk)",
          ExpressionAttributeValues: { ":unused": 1 },
        }),
      ),
    );
    assert.equal(err2.name, "ValidationException");
    assert.equal(err2.message, "Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}");
  });

  test("an item over 400 KB -> 'Item size has exceeded the maximum allowed size'", async () => {
    const err = await expectError(() =>
      ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "huge", sk: 1, blob: "x".repeat(400 * 1024) } })),
    );
    assert.equal(err.name, "ValidationException");
    assert.equal(err.message, "Item size has exceeded the maximum allowed size");
  });
});
