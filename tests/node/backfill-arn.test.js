// Backfills, ARN echoes in transactions and foreign-account tag ARNs (reference S42, S147, S165).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as D from "@aws-sdk/client-dynamodb";
import * as L from "@aws-sdk/lib-dynamodb";
import { createTable, expectError, tableName, useServer, waitActive } from "./lib/server.js";

const ctx = useServer();
const arnOf = async (TableName) => (await ctx.client.send(new D.DescribeTableCommand({ TableName }))).Table.TableArn;


describe("backfills, ARN echoes and foreign ARNs", () => {
  test("S42 / Backfilling doc: a GSI with IndexStatus CREATING and Backfilling true can be deleted", async () => {
    const table = tableName("bf");
    await ctx.client.send(new D.CreateTableCommand({ TableName: table, BillingMode: "PROVISIONED", ProvisionedThroughput: { ReadCapacityUnits: 100, WriteCapacityUnits: 1000 },
      AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }], KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }] }));
    await waitActive(ctx.client, table);
    await ctx.doc.send(new L.BatchWriteCommand({ RequestItems: { [table]: Array.from({ length: 25 }, (_, i) => ({ PutRequest: { Item: { pk: `k${i}`, g: "x" } } })) } }));
    const out = await ctx.client.send(new D.UpdateTableCommand({ TableName: table, AttributeDefinitions: [{ AttributeName: "g", AttributeType: "S" }],
      GlobalSecondaryIndexUpdates: [{ Create: { IndexName: "slow", KeySchema: [{ AttributeName: "g", KeyType: "HASH" }], Projection: { ProjectionType: "ALL" }, ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 } } }] }));
    assert.deepEqual([out.TableDescription.GlobalSecondaryIndexes[0].IndexStatus, out.TableDescription.GlobalSecondaryIndexes[0].Backfilling], ["CREATING", true]);
    // DeleteTable is refused while the index is built (S42) ...
    await expectError(() => ctx.client.send(new D.DeleteTableCommand({ TableName: table })), "ResourceInUseException");
    // ... but the index itself may be deleted during its backfill.
    const del = await ctx.client.send(new D.UpdateTableCommand({ TableName: table, GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: "slow" } }] }));
    assert.ok(del.TableDescription);
  });


  test("S165: TransactGetItems / TransactWriteItems ConsumedCapacity.TableName echoes the ARN the caller used", async () => {
    const table = await createTable(ctx.client);
    const arn = await arnOf(table);
    const w = await ctx.doc.send(new L.TransactWriteCommand({ TransactItems: [{ Put: { TableName: arn, Item: { pk: "t" } } }], ReturnConsumedCapacity: "TOTAL" }));
    const g = await ctx.doc.send(new L.TransactGetCommand({ TransactItems: [{ Get: { TableName: arn, Key: { pk: "t" } } }], ReturnConsumedCapacity: "TOTAL" }));
    assert.deepEqual([w.ConsumedCapacity[0].TableName, g.ConsumedCapacity[0].TableName], [arn, arn]);
  });

  test("S147: TagResource on another account's table ARN is AccessDeniedException", async () => {
    const table = await createTable(ctx.client);
    const foreign = (await arnOf(table)).replace("000000000000", "111111111111");
    await expectError(() => ctx.client.send(new D.TagResourceCommand({ ResourceArn: foreign, Tags: [{ Key: "a", Value: "b" }] })), "AccessDeniedException");
  });

});
