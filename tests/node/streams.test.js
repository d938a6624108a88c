// DynamoDB Streams through the JavaScript SDK v3's own streams client
// (@aws-sdk/client-dynamodb-streams) on the same endpoint: a consumer that
// pages DescribeStream and reads every shard after its parent sees the
// table's whole change history, across partition splits (UpdateTable
// raising provisioned throughput), with the time-to-live expirer's deletes
// named as the service's.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  CreateTableCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  TransactWriteItemsCommand,
} from "@aws-sdk/client-dynamodb";
import {
  DynamoDBStreamsClient,
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
} from "@aws-sdk/client-dynamodb-streams";
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";

import { expectError, tableParams, useServer, waitActive } from "./lib/server.js";

/** Bounds on paging and polling loops (bounds, not timings). */
const MAX_PAGES = 1000;
const MAX_POLLS = 300;

const ctx = useServer(
  (c) => {
    c.streams = new DynamoDBStreamsClient({
      endpoint: c.endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "x", secretAccessKey: "y" },
      maxAttempts: 1,
    });
  },
  { args: ["--ttl-interval", "0.2"] },
);

/** Every shard of the stream, `Limit` per DescribeStream page. */
async function allShards(arn, Limit = 100) {
  const shards = [];
  let ExclusiveStartShardId;
  for (let i = 0; i < MAX_PAGES; i += 1) {
    const { StreamDescription: d } = await ctx.streams.send(
      new DescribeStreamCommand({ StreamArn: arn, Limit, ExclusiveStartShardId }),
    );
    assert.ok(d.Shards.length <= Limit);
    shards.push(...d.Shards);
    if (!d.LastEvaluatedShardId) return shards;
    ExclusiveStartShardId = d.LastEvaluatedShardId;
  }
  throw new Error("DescribeStream never stopped paging");
}

/** Every record of a shard from its trim horizon, and the last iterator. */
async function readShard(arn, ShardId) {
  let { ShardIterator } = await ctx.streams.send(
    new GetShardIteratorCommand({ StreamArn: arn, ShardId, ShardIteratorType: "TRIM_HORIZON" }),
  );
  const records = [];
  for (let i = 0; i < MAX_PAGES; i += 1) {
    const page = await ctx.streams.send(new GetRecordsCommand({ ShardIterator, Limit: 3 }));
    records.push(...page.Records);
    ShardIterator = page.NextShardIterator;
    if (page.Records.length === 0 || !ShardIterator) return { records, last: ShardIterator };
  }
  throw new Error("the shard never ran dry");
}

/** Reads each shard after its parent; returns records per key and the shards. */
async function consume(arn, limit) {
  const shards = await allShards(arn, limit);
  const done = new Set();
  const perKey = {};
  for (const shard of shards) {
    if (shard.ParentShardId) assert.ok(done.has(shard.ParentShardId), "a parent is read before its children");
    const { records, last } = await readShard(arn, shard.ShardId);
    if (shard.SequenceNumberRange.EndingSequenceNumber) assert.equal(last, undefined);
    for (const r of records) {
      const pk = r.dynamodb.Keys.pk.S;
      (perKey[pk] ??= []).push([r.eventName, r.dynamodb.OldImage?.v?.N, r.dynamodb.NewImage?.v?.N]);
    }
    done.add(shard.ShardId);
  }
  return { perKey, shards };
}

describe("streams", () => {
  test("a consumer sees every change once, in order, across partition splits", async () => {
    const params = tableParams({
      BillingMode: "PROVISIONED",
      ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 500 },
      StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" },
    });
    const table = params.TableName;
    await ctx.client.send(new CreateTableCommand(params));
    await waitActive(ctx.client, table);
    const { Streams } = await ctx.streams.send(new ListStreamsCommand({ TableName: table }));
    assert.equal(Streams.length, 1);
    const arn = Streams[0].StreamArn;
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    const expected = Object.fromEntries(keys.map((k) => [k, []]));
    const writeAll = async (v) => {
      for (const pk of keys) {
        await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk, v } }));
        expected[pk].push(v === 1 ? ["INSERT", undefined, "1"] : ["MODIFY", String(v - 1), String(v)]);
      }
    };
    await writeAll(1);
    for (const wcu of [1500, 3000]) {
      await ctx.client.send(
        new UpdateTableCommand({
          TableName: table,
          ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: wcu },
        }),
      );
      await waitActive(ctx.client, table);
      await writeAll(wcu === 1500 ? 2 : 3);
    }
    await ctx.doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: "k0" },
        UpdateExpression: "SET v = :v",
        ExpressionAttributeValues: { ":v": 4 },
      }),
    );
    expected.k0.push(["MODIFY", "3", "4"]);
    await ctx.doc.send(new DeleteCommand({ TableName: table, Key: { pk: "k1" } }));
    expected.k1.push(["REMOVE", "3", undefined]);
    await ctx.client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Delete: { TableName: table, Key: { pk: { S: "k2" } } } },
          { Put: { TableName: table, Item: { pk: { S: "k3" }, v: { N: "9" } } } },
        ],
      }),
    );
    expected.k2.push(["REMOVE", "3", undefined]);
    expected.k3.push(["MODIFY", "3", "9"]);

    const { perKey, shards } = await consume(arn, 2);
    assert.deepEqual(perKey, expected);
    // 1 partition, then 2, then 4: a root, two children, four grandchildren.
    assert.equal(shards.length, 7);
    const children = (id) => shards.filter((s) => s.ParentShardId === id);
    for (const s of shards) {
      const closed = Boolean(s.SequenceNumberRange.EndingSequenceNumber);
      assert.equal(children(s.ShardId).length, closed ? 2 : 0, "a closed shard has two children");
    }
  });

  test("a time-to-live delete is a REMOVE record by the service; unknown shards are not found", async () => {
    const params = tableParams({ StreamSpecification: { StreamEnabled: true, StreamViewType: "OLD_IMAGE" } });
    const table = params.TableName;
    await ctx.client.send(new CreateTableCommand(params));
    await waitActive(ctx.client, table);
    await ctx.client.send(
      new UpdateTimeToLiveCommand({ TableName: table, TimeToLiveSpecification: { Enabled: true, AttributeName: "exp" } }),
    );
    const now = Math.floor(Date.now() / 1000);
    await ctx.doc.send(new PutCommand({ TableName: table, Item: { pk: "gone", exp: now - 60, v: 1 } }));
    await ctx.doc.send(new DeleteCommand({ TableName: table, Key: { pk: "missing" } }));
    let polls = 0;
    while ((await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "gone" }, ConsistentRead: true }))).Item) {
      polls += 1;
      assert.ok(polls < MAX_POLLS, "the expired item was never deleted");
      await new Promise((r) => setTimeout(r, 50));
    }
    const { Streams } = await ctx.streams.send(new ListStreamsCommand({ TableName: table }));
    const arn = Streams[0].StreamArn;
    const records = [];
    for (const shard of await allShards(arn)) records.push(...(await readShard(arn, shard.ShardId)).records);
    assert.deepEqual(
      records.map((r) => [r.eventName, r.dynamodb.Keys.pk.S, r.userIdentity]),
      [
        ["INSERT", "gone", undefined],
        ["REMOVE", "gone", { Type: "Service", PrincipalId: "dynamodb.amazonaws.com" }],
      ],
    );
    assert.equal(records[1].dynamodb.OldImage.v.N, "1");
    assert.equal(records[1].dynamodb.NewImage, undefined);
    await expectError(
      () =>
        ctx.streams.send(
          new GetShardIteratorCommand({
            StreamArn: arn,
            ShardId: "shardId-00000000000000000000-00000000",
            ShardIteratorType: "LATEST",
          }),
        ),
      "ResourceNotFoundException",
    );
  });
});
