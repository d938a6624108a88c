// Error surfaces: names, HTTP status and exact messages as the JS SDK sees
// them.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";

import { createTable, expectError, expectValidation, tableName, useServer } from "./lib/server.js";

let table; // pk S + sk N

const ctx = useServer(async () => {
  table = await createTable(ctx.client, { rangeType: "N" });
});

const KEY_SCHEMA = "The provided key element does not match the schema";

/** UpdateItem of the item pk "k", sk 1 through the document client. */
const updateItem = (UpdateExpression, ExpressionAttributeValues) =>
  ctx.doc.send(new UpdateCommand({ TableName: table, Key: { pk: "k", sk: 1 }, UpdateExpression, ExpressionAttributeValues }));

describe("errors", () => {
  test("GetItem with a wrong key name, a missing range key or a wrongly typed key -> key schema ValidationException", async () => {
    const err = await expectError(
      () => ctx.doc.send(new GetCommand({ TableName: table, Key: { id: "x", sk: 1 } })),
      "ValidationException",
      KEY_SCHEMA,
    );
    assert.equal(err.$metadata.httpStatusCode, 400);
    assert.equal(err.$fault, "client");

    // missing range key
    await expectError(() => ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "x" } })), "ValidationException", KEY_SCHEMA);
    // wrongly typed range key
    await expectValidation(() => ctx.client.send(new GetItemCommand({ TableName: table, Key: { pk: { S: "x" }, sk: { S: "1" } } })), KEY_SCHEMA);
  });

  test("PutItem without the range key / with a wrongly typed key -> ValidationException", async () => {
    await expectValidation(
      () => ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "x", v: 1 } })),
      "One or more parameter values were invalid: Missing the key sk in the item",
    );
    await expectValidation(
      () => ctx.client.send(new PutItemCommand({ TableName: table, Item: { pk: { S: "x" }, sk: { S: "one" } } })),
      "One or more parameter values were invalid: Type mismatch for key sk expected: N actual: S",
    );
  });

  test("operations on a missing table -> ResourceNotFoundException", async () => {
    const name = tableName("nosuch");
    const err = await expectError(
      () => ctx.doc.send(new PutCommand({ TableName: name, Item: { pk: "x" } })),
      "ResourceNotFoundException",
      /^Requested resource not found/,
    );
    assert.equal(err.$metadata.httpStatusCode, 400);

    await expectError(() => ctx.doc.send(new GetCommand({ TableName: name, Key: { pk: "x" } })), "ResourceNotFoundException");
  });

  test("UpdateItem that sets a key attribute -> 'Cannot update attribute pk'", async () => {
    await expectValidation(
      () => updateItem("SET pk = :v", { ":v": "other" }),
      "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key",
    );
  });

  test("expression errors: UpdateExpression syntax error, unused ExpressionAttributeValues", async () => {
    await expectError(() => updateItem("SET = :v", { ":v": 1 }), "ValidationException", /^Invalid UpdateExpression: /);
    await expectValidation(
      () =>
        ctx.doc.send(
          new PutCommand({
            TableName: table,
            Item: { pk: "k", sk: 1 },
            ConditionExpression: "attribute_not_exists(pk)",
            ExpressionAttributeValues: { ":unused": 1 },
          }),
        ),
      "Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}",
    );
  });

  test("an item over 400 KB -> 'Item size has exceeded the maximum allowed size'", async () => {
    await expectValidation(
      () => ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "huge", sk: 1, blob: "x".repeat(400 * 1024) } })),
      "Item size has exceeded the maximum allowed size",
    );
  });
});
