// Query (paging via paginateQuery, ordering, filters) and Scan (parallel
// segments, Select COUNT).

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { QueryCommand, ScanCommand, paginateQuery, paginateScan } from "@aws-sdk/lib-dynamodb";

import { batchPut, createTable, expectError, useServer } from "./lib/server.js";

let qtable; // pk S + sk N
let stable; // pk S only

// sort keys deliberately inserted out of order; numeric order differs from text order
const SKS = [10, 2, -5, 100, 0, 7.5, 33, 1, 20, 3];


const ctx = useServer(async () => {
  qtable = await createTable(ctx.client, { rangeType: "N" });
  await batchPut(ctx.doc, qtable, [
    ...SKS.map((sk) => ({ pk: "p1", sk, odd: Math.abs(sk) % 2 === 1, label: `s${sk}` })),
    // other partitions that must never appear in p1 queries
    { pk: "p0", sk: 1 },
    { pk: "p2", sk: 1 },
    { pk: "p1x", sk: 1 },
  ]);
  stable = await createTable(ctx.client);
  await batchPut(
    ctx.doc,
    stable,
    Array.from({ length: 100 }, (_, i) => ({ pk: `item-${String(i).padStart(3, "0")}`, n: i })),
  );
});

/** Query of qtable's partition "p1" (bound to ":p" beside `values`). */
const queryP1 = (KeyConditionExpression, values, params) =>
  ctx.doc.send(
    new QueryCommand({
      TableName: qtable,
      KeyConditionExpression,
      ExpressionAttributeValues: { ":p": "p1", ...values },
      ...params,
    }),
  );

describe("query", () => {
  test("paginateQuery with pageSize 3 yields pages of 3,3,3,1 in ascending numeric sort-key order", async () => {
    const pages = [];
    for await (const page of paginateQuery(
      { client: ctx.doc, pageSize: 3 },
      {
        TableName: qtable,
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": "p1" },
        ConsistentRead: true,
      },
    )) {
      pages.push(page);
      if (pages.length > 20) assert.fail("paging did not terminate");
    }
    assert.deepEqual(
      pages.map((p) => p.Items.length),
      [3, 3, 3, 1],
    );
    for (const p of pages.slice(0, 3)) {
      assert.equal(p.Count, 3);
      assert.equal(p.ScannedCount, 3);
      const last = p.Items[p.Items.length - 1];
      assert.deepEqual(p.LastEvaluatedKey, { pk: "p1", sk: last.sk }, "LastEvaluatedKey is the last item's key");
    }
    assert.equal(pages[3].LastEvaluatedKey, undefined);
    const sks = pages.flatMap((p) => p.Items.map((i) => i.sk));
    assert.deepEqual(sks, [...SKS].sort((a, b) => a - b));
    assert.ok(pages.flatMap((p) => p.Items).every((i) => i.pk === "p1"));
  });

  test("ScanIndexForward=false with BETWEEN returns descending order", async () => {
    const out = await queryP1("pk = :p AND sk BETWEEN :lo AND :hi", { ":lo": 1, ":hi": 20 }, { ScanIndexForward: false });
    assert.deepEqual(
      out.Items.map((i) => i.sk),
      [20, 10, 7.5, 3, 2, 1],
    );
    assert.equal(out.Count, 6);
    assert.equal(out.LastEvaluatedKey, undefined);
  });

  test("FilterExpression: Count counts matches, ScannedCount counts items read", async () => {
    const out = await queryP1("pk = :p AND sk > :z", { ":z": 0, ":t": true }, {
      FilterExpression: "odd = :t",
      ProjectionExpression: "sk, #l",
      ExpressionAttributeNames: { "#l": "label" },
    });
    // sk > 0: 1, 2, 3, 7.5, 10, 20, 33, 100 -> odd ones: 1, 3, 33
    assert.equal(out.ScannedCount, 8);
    assert.equal(out.Count, 3);
    assert.deepEqual(out.Items, [
      { sk: 1, label: "s1" },
      { sk: 3, label: "s3" },
      { sk: 33, label: "s33" },
    ]);
  });

  test("Limit applies before the filter: a page can be empty and still carry LastEvaluatedKey", async () => {
    // The filter reads a non-key attribute: DynamoDB refuses filters on the queried key (reference S53).
    const out = await queryP1("pk = :p", { ":none": "none" }, { FilterExpression: "label = :none", Limit: 2 });
    assert.deepEqual(out.Items, []);
    assert.equal(out.Count, 0);
    assert.equal(out.ScannedCount, 2);
    assert.deepEqual(out.LastEvaluatedKey, { pk: "p1", sk: 0 });
  });
});

describe("scan", () => {
  test("parallel Scan with TotalSegments 4 covers every item exactly once", async () => {
    const segments = [];
    for (let seg = 0; seg < 4; seg++) {
      const keys = [];
      for await (const page of paginateScan(
        { client: ctx.doc, pageSize: 7 },
        { TableName: stable, Segment: seg, TotalSegments: 4 },
      )) {
        keys.push(...page.Items.map((i) => i.pk));
      }
      segments.push(keys);
    }
    const all = segments.flat();
    assert.equal(all.length, 100, `segment sizes ${segments.map((s) => s.length)}`);
    assert.equal(new Set(all).size, 100, "no item may appear in two segments");
    assert.deepEqual(
      [...all].sort(),
      Array.from({ length: 100 }, (_, i) => `item-${String(i).padStart(3, "0")}`),
    );
    assert.ok(
      segments.filter((s) => s.length > 0).length >= 2,
      `items should spread over segments, got sizes ${segments.map((s) => s.length)}`,
    );

    // Segment without TotalSegments is invalid.
    await expectError(() => ctx.doc.send(new ScanCommand({ TableName: stable, Segment: 1 })), "ValidationException");
  });

  test("Scan Select COUNT with a filter returns counts and no Items", async () => {
    const out = await ctx.doc.send(
      new ScanCommand({
        TableName: stable,
        Select: "COUNT",
        FilterExpression: "n < :k",
        ExpressionAttributeValues: { ":k": 10 },
      }),
    );
    assert.equal(out.Items, undefined);
    assert.equal(out.Count, 10);
    assert.equal(out.ScannedCount, 100);
  });
});
