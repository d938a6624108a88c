// Tags (TagResource, UntagResource, ListTagsOfResource, CreateTable Tags),
// DescribeEndpoints, table ARNs as TableName, per-region tables and request
// validation against the service model, through the JS SDK v3.
// Same expectations as tests/python/test_tags_endpoints.py; validation
// messages as in docs/reference/dynamodb-api-surface.md section 3.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeEndpointsCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  PutItemCommand,
  QueryCommand as RawQueryCommand,
  ScanCommand,
  ListTagsOfResourceCommand,
  TagResourceCommand,
  UntagResourceCommand,
} from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";

import {
  createTable,
  expectError,
  expectValidation,
  keySchema,
  makeClient,
  makeDocClient,
  tableName,
  tableParams,
  useServer,
} from "./lib/server.js";

const ctx = useServer();

const arnOf = async (TableName, client = ctx.client) =>
  (await client.send(new DescribeTableCommand({ TableName }))).Table.TableArn;

/** Every tag of a resource, following NextToken. */
async function allTags(ResourceArn) {
  const tags = [];
  let NextToken;
  for (let page = 0; page < 100; page++) {
    const out = await ctx.client.send(new ListTagsOfResourceCommand({ ResourceArn, NextToken }));
    tags.push(...out.Tags);
    NextToken = out.NextToken;
    if (!NextToken) return tags;
  }
  throw new Error("ListTagsOfResource never ended");
}

/** A client for `region` against the same server. */
const regionClient = (region) =>
  new DynamoDBClient({
    endpoint: ctx.endpoint,
    region,
    credentials: { accessKeyId: "x", secretAccessKey: "y" },
    maxAttempts: 1,
  });

describe("tags", () => {
  test("CreateTable Tags, TagResource overwrites and adds, ListTagsOfResource lists them in one page, UntagResource removes", async () => {
    const TableName = tableName("tags");
    await createTable(ctx.client, { name: TableName, Tags: [{ Key: "team", Value: "data" }] });
    const arn = await arnOf(TableName);
    assert.equal(arn, `arn:aws:dynamodb:us-east-1:000000000000:table/${TableName}`);
    assert.deepEqual(await allTags(arn), [{ Key: "team", Value: "data" }]);

    await ctx.client.send(
      new TagResourceCommand({
        ResourceArn: arn,
        Tags: [
          { Key: "team", Value: "platform" },
          { Key: "cost center", Value: "" },
          ...Array.from({ length: 20 }, (_, i) => ({ Key: `k${String(i).padStart(2, "0")}`, Value: `v${i}` })),
        ],
      }),
    );
    const tags = await allTags(arn);
    assert.equal(tags.length, 22);
    assert.deepEqual(tags.slice(0, 2), [
      { Key: "team", Value: "platform" },
      { Key: "cost center", Value: "" },
    ]);
    assert.deepEqual(
      tags.slice(2),
      Array.from({ length: 20 }, (_, i) => ({ Key: `k${String(i).padStart(2, "0")}`, Value: `v${i}` })),
    );
    // All in one page, as DynamoDB answers (a table has at most 50 tags).
    const first = await ctx.client.send(new ListTagsOfResourceCommand({ ResourceArn: arn }));
    assert.deepEqual(first.Tags, tags);
    assert.equal(first.NextToken, undefined);

    await ctx.client.send(
      new UntagResourceCommand({
        ResourceArn: arn,
        TagKeys: ["team", ...Array.from({ length: 20 }, (_, i) => `k${String(i).padStart(2, "0")}`)],
      }),
    );
    assert.deepEqual(await allTags(arn), [{ Key: "cost center", Value: "" }]);
  });

  test("tag errors: empty lists, a non-ARN, a missing table, over 50 tags, a 129-character key, an aws: key", async () => {
    const table = await createTable(ctx.client);
    const arn = await arnOf(table);
    await expectValidation(
      () => ctx.client.send(new TagResourceCommand({ ResourceArn: arn, Tags: [] })),
      "Atleast one Tag needs to be provided as Input.",
    );
    await expectValidation(
      () => ctx.client.send(new UntagResourceCommand({ ResourceArn: arn, TagKeys: [] })),
      "Atleast one Tag Key needs to be provided as Input.",
    );
    const notArn = await expectValidation(
      () => ctx.client.send(new TagResourceCommand({ ResourceArn: "abcd", Tags: [{ Key: "a", Value: "b" }] })),
      "One or more parameter values were invalid: ARNs must start with 'arn:': abcd",
    );
    assert.equal(notArn.$metadata.httpStatusCode, 400);
    const missing = `${arn.slice(0, arn.lastIndexOf("/"))}/${tableName("gone")}`;
    await expectError(
      () => ctx.client.send(new TagResourceCommand({ ResourceArn: missing, Tags: [{ Key: "a", Value: "b" }] })),
      "ResourceNotFoundException",
      `Requested resource not found: ResourceArn: ${missing} not found`,
    );
    await expectValidation(
      () =>
        ctx.client.send(
          new TagResourceCommand({ ResourceArn: arn, Tags: Array.from({ length: 51 }, (_, i) => ({ Key: `k${i}`, Value: "v" })) }),
        ),
      "Number of Tags exceed the current limit for the provided ResourceArn",
    );
    assert.deepEqual(await allTags(arn), [], "a refused TagResource sets nothing");
    const longKey = "k".repeat(129);
    await expectValidation(
      () => ctx.client.send(new TagResourceCommand({ ResourceArn: arn, Tags: [{ Key: "ok", Value: "v" }, { Key: longKey, Value: "v" }] })),
      `The Tag Key provided is invalid, Key: ${longKey}`,
    );
    await expectValidation(
      () => ctx.client.send(new TagResourceCommand({ ResourceArn: arn, Tags: [{ Key: "aws:zzz", Value: "v" }] })),
      "Tag Key cannot be prefixed with aws:, Key: aws:zzz",
    );
    assert.deepEqual(await allTags(arn), []);
  });
});

describe("endpoints, ARNs and regions", () => {
  test("DescribeEndpoints returns the host:port the client used", async () => {
    const out = await ctx.client.send(new DescribeEndpointsCommand({}));
    assert.deepEqual(out.Endpoints, [{ Address: new URL(ctx.endpoint).host, CachePeriodInMinutes: 1440 }]);
    assert.equal(out.Endpoints[0].Address, `127.0.0.1:${ctx.server.port}`);
  });

  test("a table ARN works as TableName and is echoed in ConsumedCapacity and BatchGetItem Responses", async () => {
    const table = await createTable(ctx.client);
    const arn = await arnOf(table);
    await ctx.doc.send(new PutCommand({ TableName: arn, Item: { pk: "a", v: 1 } }));
    assert.deepEqual((await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "a" } }))).Item, { pk: "a", v: 1 });

    const got = await ctx.doc.send(new GetCommand({ TableName: arn, Key: { pk: "a" }, ReturnConsumedCapacity: "TOTAL" }));
    assert.deepEqual(got.Item, { pk: "a", v: 1 });
    assert.equal(got.ConsumedCapacity.TableName, arn, "echoes the caller's form");

    await ctx.doc.send(
      new UpdateCommand({ TableName: arn, Key: { pk: "a" }, UpdateExpression: "SET v = v + :one", ExpressionAttributeValues: { ":one": 1 } }),
    );
    const q = await ctx.doc.send(
      new QueryCommand({ TableName: arn, KeyConditionExpression: "pk = :p", ExpressionAttributeValues: { ":p": "a" }, ReturnConsumedCapacity: "TOTAL" }),
    );
    assert.deepEqual(q.Items, [{ pk: "a", v: 2 }]);
    assert.equal(q.ConsumedCapacity.TableName, arn);

    const w = await ctx.doc.send(
      new BatchWriteCommand({ RequestItems: { [arn]: [{ PutRequest: { Item: { pk: "b" } } }] }, ReturnConsumedCapacity: "TOTAL" }),
    );
    assert.deepEqual(w.UnprocessedItems, {});
    assert.deepEqual(w.ConsumedCapacity, [{ TableName: arn, CapacityUnits: 1 }]);

    const batch = await ctx.doc.send(new BatchGetCommand({ RequestItems: { [arn]: { Keys: [{ pk: "a" }, { pk: "b" }] } } }));
    assert.deepEqual(Object.keys(batch.Responses), [arn]);
    assert.deepEqual(batch.Responses[arn].map((i) => i.pk).sort(), ["a", "b"]);

    await ctx.doc.send(new TransactWriteCommand({ TransactItems: [{ Delete: { TableName: arn, Key: { pk: "a" } } }] }));
    assert.equal((await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "a" } }))).Item, undefined);
    assert.equal((await ctx.client.send(new DescribeTableCommand({ TableName: arn }))).Table.TableName, table);

    const otherRegion = arn.replace(":us-east-1:", ":eu-west-1:");
    await expectValidation(() => ctx.client.send(new DescribeTableCommand({ TableName: otherRegion })), `1 validation error detected: Invalid AWS region in '${otherRegion}'`);
  });

  for (const region of ["eu-west-1", "ap-southeast-2"]) {
    test(`${region}: the credential scope's region has its own tables`, async () => {
      const there = regionClient(region);
      const thereDoc = makeDocClient(there);
      const name = tableName("region");
      try {
        await createTable(there, { name });
        assert.equal(await arnOf(name, there), `arn:aws:dynamodb:${region}:000000000000:table/${name}`);
        assert.ok((await there.send(new ListTablesCommand({}))).TableNames.includes(name));
        assert.ok(!(await ctx.client.send(new ListTablesCommand({}))).TableNames.includes(name));
        await expectError(() => ctx.client.send(new DescribeTableCommand({ TableName: name })), "ResourceNotFoundException");

        // Same name in us-east-1: an independent table.
        await createTable(ctx.client, { name });
        await thereDoc.send(new PutCommand({ TableName: name, Item: { pk: "k", where: region } }));
        await ctx.doc.send(new PutCommand({ TableName: name, Item: { pk: "k", where: "us-east-1" } }));
        assert.deepEqual((await thereDoc.send(new GetCommand({ TableName: name, Key: { pk: "k" } }))).Item, { pk: "k", where: region });
        assert.deepEqual((await ctx.doc.send(new GetCommand({ TableName: name, Key: { pk: "k" } }))).Item, { pk: "k", where: "us-east-1" });
        await ctx.client.send(new DeleteTableCommand({ TableName: name }));

        // DescribeEndpoints answers the address whatever the region.
        const ep = await there.send(new DescribeEndpointsCommand({}));
        assert.deepEqual(ep.Endpoints, [{ Address: new URL(ctx.endpoint).host, CachePeriodInMinutes: 1440 }]);
      } finally {
        await there.send(new DeleteTableCommand({ TableName: name })).catch(() => {});
        there.destroy();
      }
    });
  }
});

/**
 * A client whose request bodies are rewritten by `edit(body)` before they are
 * signed (the SDK only sends well-typed JSON; this sends what it would not).
 */
function tamperedClient(edit) {
  const client = makeClient(ctx.endpoint);
  client.middlewareStack.add(
    (next) => async (args) => {
      const raw = args.request.body;
      const text = typeof raw === "string" ? raw : new TextDecoder().decode(raw);
      const body = JSON.parse(text);
      edit(body);
      args.request.body = JSON.stringify(body);
      return next(args);
    },
    { step: "build", priority: "high", name: "tamperBody" },
  );
  return client;
}

describe("validation against the service model", () => {
  test("a wrong JSON type for a member is a SerializationException", async () => {
    const limitAsString = tamperedClient((b) => {
      b.Limit = "five";
    });
    const tableAsNumber = tamperedClient((b) => {
      b.TableName = 5;
    });
    try {
      const err = await expectError(
        () => limitAsString.send(new ListTablesCommand({ Limit: 5 })),
        "SerializationException",
        "STRING_VALUE cannot be converted to Integer",
      );
      assert.equal(err.$metadata.httpStatusCode, 400);
      await expectError(
        () => tableAsNumber.send(new ScanCommand({ TableName: "whatever" })),
        "SerializationException",
        "NUMBER_VALUE cannot be converted to String",
      );
    } finally {
      limitAsString.destroy();
      tableAsNumber.destroy();
    }
  });

  test("constraint violations are aggregated into one ValidationException, in model member order", async () => {
    const missing = tableName("missing");
    await expectValidation(
      () => ctx.client.send(new ScanCommand({ TableName: missing, Limit: 0, Segment: 1000000, TotalSegments: 0, Select: "count" })),
      "4 validation errors detected: " +
        "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1; " +
        "Value 'count' at 'select' failed to satisfy constraint: Member must satisfy enum value set: " +
        "[SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]; " +
        "Value '0' at 'totalSegments' failed to satisfy constraint: Member must have value greater than or equal to 1; " +
        "Value '1000000' at 'segment' failed to satisfy constraint: Member must have value less than or equal to 999999",
    );
    await expectValidation(
      () =>
        ctx.client.send(
          new PutItemCommand({ TableName: missing, Item: { pk: { S: "x" } }, ReturnValues: "EVERYTHING", ReturnConsumedCapacity: "SOME" }),
        ),
      "2 validation errors detected: " +
        "Value 'EVERYTHING' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: " +
        "[ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]; " +
        "Value 'SOME' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]",
    );
    await expectValidation(
      () =>
        ctx.client.send(
          new CreateTableCommand({ ...tableParams({ name: missing, hashType: "Z" }), KeySchema: keySchema(["pk", "HUSH"]) }),
        ),
      "2 validation errors detected: " +
        "Value 'Z' at 'attributeDefinitions.1.member.attributeType' failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]; " +
        "Value 'HUSH' at 'keySchema.1.member.keyType' failed to satisfy constraint: Member must satisfy enum value set: [HASH, RANGE]",
    );
    // Query's Limit quirk: no value, capital L.
    await expectValidation(
      () =>
        ctx.client.send(
          new RawQueryCommand({ TableName: missing, Limit: 0, KeyConditionExpression: "pk = :p", ExpressionAttributeValues: { ":p": { S: "x" } } }),
        ),
      "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
    );
    // Nothing was created along the way.
    await expectError(() => ctx.client.send(new DescribeTableCommand({ TableName: missing })), "ResourceNotFoundException");
  });
});
