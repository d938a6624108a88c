// Control plane: CreateTable / DescribeTable / ListTables / DeleteTable.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  paginateListTables,
} from "@aws-sdk/client-dynamodb";

import { createTable, expectError, tableName, tableParams, useServer, waitActive } from "./lib/server.js";

const ctx = useServer();

describe("tables", () => {
  test("CreateTable returns a description; DescribeTable reports ACTIVE with the schema", async () => {
    const name = tableName("create");
    const out = await ctx.client.send(new CreateTableCommand(tableParams({ name, rangeType: "N" })));
    assert.equal(out.$metadata.httpStatusCode, 200);
    assert.ok(out.$metadata.requestId, "x-amzn-RequestId header should be present");
    const td = out.TableDescription;
    assert.equal(td.TableName, name);
    assert.ok(["CREATING", "ACTIVE"].includes(td.TableStatus), `status ${td.TableStatus}`);
    assert.deepEqual(td.KeySchema, [
      { AttributeName: "pk", KeyType: "HASH" },
      { AttributeName: "sk", KeyType: "RANGE" },
    ]);

    const desc = await waitActive(ctx.client, name);
    assert.equal(desc.TableName, name);
    assert.equal(desc.TableStatus, "ACTIVE");
    assert.deepEqual(desc.KeySchema, [
      { AttributeName: "pk", KeyType: "HASH" },
      { AttributeName: "sk", KeyType: "RANGE" },
    ]);
    const defs = [...desc.AttributeDefinitions].sort((a, b) => a.AttributeName.localeCompare(b.AttributeName));
    assert.deepEqual(defs, [
      { AttributeName: "pk", AttributeType: "S" },
      { AttributeName: "sk", AttributeType: "N" },
    ]);
    assert.equal(desc.ItemCount, 0);
    assert.equal(desc.TableSizeBytes, 0);
    assert.equal(desc.BillingModeSummary?.BillingMode, "PAY_PER_REQUEST");
    assert.match(desc.TableArn, new RegExp(`^arn:aws:dynamodb:[a-z0-9-]+:\\d{12}:table/${name}$`));
    assert.ok(desc.CreationDateTime instanceof Date, "CreationDateTime should parse as a Date");
  });

  test("ListTables pages through every table in name order", async () => {
    const prefix = tableName("list");
    const names = [`${prefix}-c`, `${prefix}-a`, `${prefix}-b`];
    for (const n of names) await createTable(ctx.client, { name: n });

    const seen = [];
    let pages = 0;
    for await (const page of paginateListTables({ client: ctx.client, pageSize: 1 }, {})) {
      pages += 1;
      assert.ok(page.TableNames.length <= 1, `page of ${page.TableNames.length} with Limit 1`);
      seen.push(...page.TableNames);
      if (pages > 1000) assert.fail("ListTables paging did not terminate");
    }
    const mine = seen.filter((n) => n.startsWith(prefix));
    assert.deepEqual(mine, [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);
    assert.deepEqual([...seen].sort(), seen, "ListTables must return names in ascending order");
  });

  test("CreateTable of an existing name fails with ResourceInUseException", async () => {
    const name = await createTable(ctx.client);
    const err = await expectError(
      () =>
        ctx.client.send(new CreateTableCommand(tableParams({ name }))),
      "ResourceInUseException",
      new RegExp(`Table already exists: ${name}`),
    );
    assert.equal(err.$metadata.httpStatusCode, 400);
  });

  test("DeleteTable returns the description and the table then disappears", async () => {
    const name = await createTable(ctx.client);
    const out = await ctx.client.send(new DeleteTableCommand({ TableName: name }));
    assert.equal(out.TableDescription.TableName, name);
    assert.ok(
      ["DELETING", "ACTIVE"].includes(out.TableDescription.TableStatus),
      `status ${out.TableDescription.TableStatus}`,
    );

    const deadline = Date.now() + 10000;
    let err = null;
    while (Date.now() < deadline) {
      try {
        await ctx.client.send(new DescribeTableCommand({ TableName: name }));
        await sleep(50);
      } catch (e) {
        err = e;
        break;
      }
    }
    assert.ok(err, "DescribeTable kept succeeding after DeleteTable");
    assert.equal(err.name, "ResourceNotFoundException");
  });

  test("DescribeTable / DeleteTable of a never-created table -> ResourceNotFoundException", async () => {
    const name = tableName("missing");
    const err = await expectError(
      () => ctx.client.send(new DescribeTableCommand({ TableName: name })),
      "ResourceNotFoundException",
      /^Requested resource not found/,
    );
    assert.equal(err.$metadata.httpStatusCode, 400);

    await expectError(() => ctx.client.send(new DeleteTableCommand({ TableName: name })), "ResourceNotFoundException");
  });
});
