// Time to live and stream settings through the JavaScript SDK v3, against a
// server whose expirer runs every 0.2 s.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";

import { tableParams, useServer, waitActive } from "./lib/server.js";

/** Polls allowed while waiting for the expirer (a bound, not a timing). */
const MAX_POLLS = 300;

const ctx = useServer(null, { args: ["--ttl-interval", "0.2"] });

const get = async (TableName, pk) =>
  (await ctx.doc.send(new GetCommand({ TableName, Key: { pk }, ConsistentRead: true }))).Item;

describe("time to live and streams", () => {
  test("an expired item is deleted by the expirer; a live one stays", async () => {
    const params = tableParams();
    await ctx.client.send(new CreateTableCommand(params));
    await waitActive(ctx.client, params.TableName);
    const table = params.TableName;
    await ctx.client.send(
      new UpdateTimeToLiveCommand({
        TableName: table,
        TimeToLiveSpecification: { Enabled: true, AttributeName: "exp" },
      }),
    );
    const described = await ctx.client.send(new DescribeTimeToLiveCommand({ TableName: table }));
    assert.deepEqual(described.TimeToLiveDescription, { TimeToLiveStatus: "ENABLED", AttributeName: "exp" });

    const now = Math.floor(Date.now() / 1000);
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "expired", exp: now - 60 } }));
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "live", exp: now + 3600 } }));
    let polls = 0;
    while ((await get(table, "expired")) !== undefined) {
      polls += 1;
      assert.ok(polls < MAX_POLLS, "the expired item was never deleted");
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(await get(table, "live"), { pk: "live", exp: now + 3600 });
  });

  test("a stream-enabled table describes its stream", async () => {
    const params = tableParams({
      StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" },
    });
    await ctx.client.send(new CreateTableCommand(params));
    await waitActive(ctx.client, params.TableName);
    const { Table } = await ctx.client.send(new DescribeTableCommand({ TableName: params.TableName }));
    assert.deepEqual(Table.StreamSpecification, { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" });
    assert.match(Table.LatestStreamArn, new RegExp(`:table/${params.TableName}/stream/`));
    assert.ok(Table.LatestStreamLabel);
  });
});
