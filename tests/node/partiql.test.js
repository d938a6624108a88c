// PartiQL through the JavaScript SDK v3: ExecuteStatement, BatchExecuteStatement, ExecuteTransaction.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  BatchExecuteStatementCommand,
  ExecuteStatementCommand,
  ExecuteTransactionCommand,
  GetCommand,
} from "@aws-sdk/lib-dynamodb";

import { createTable, expectError, useServer } from "./lib/server.js";

let table;

const ctx = useServer(async () => {
  table = await createTable(ctx.client, { rangeType: "N" });
});

const run = (Statement, Parameters = undefined, extra = {}) =>
  ctx.doc.send(new ExecuteStatementCommand({ Statement, Parameters, ...extra }));

describe("partiql", () => {
  test("INSERT, SELECT with parameters and paging, UPDATE and DELETE", async () => {
    for (let i = 0; i < 5; i += 1) {
      await run(`INSERT INTO "${table}" VALUE {'pk': ?, 'sk': ?, 'tags': ?}`, ["js", i, new Set(["x"])]);
    }
    const seen = [];
    let NextToken;
    let pages = 0;
    do {
      const page = await run(`SELECT sk, tags FROM "${table}" WHERE pk = ?`, ["js"], { Limit: 2, NextToken });
      seen.push(...page.Items.map((i) => i.sk));
      NextToken = page.NextToken;
      pages += 1;
    } while (NextToken && pages < 10);
    assert.deepEqual(seen, [0, 1, 2, 3, 4]);
    assert.equal(pages, 3);

    const updated = await run(`UPDATE "${table}" SET n = 7 REMOVE tags WHERE pk = 'js' AND sk = 1 RETURNING ALL NEW *`);
    assert.deepEqual(updated.Items, [{ pk: "js", sk: 1, n: 7 }]);
    await run(`DELETE FROM "${table}" WHERE pk = 'js' AND sk = 0`);
    const gone = await ctx.doc.send(new GetCommand({ TableName: table, Key: { pk: "js", sk: 0 }, ConsistentRead: true }));
    assert.equal(gone.Item, undefined);
  });

  test("a duplicate INSERT is DuplicateItemException", async () => {
    await run(`INSERT INTO "${table}" VALUE {'pk': 'dup', 'sk': 1}`);
    await expectError(
      () => run(`INSERT INTO "${table}" VALUE {'pk': 'dup', 'sk': 1}`),
      "DuplicateItemException",
      "Duplicate primary key exists in table",
    );
  });

  test("BatchExecuteStatement answers per statement", async () => {
    const out = await ctx.doc.send(
      new BatchExecuteStatementCommand({
        Statements: [
          { Statement: `INSERT INTO "${table}" VALUE {'pk': 'batch', 'sk': 1}` },
          { Statement: `INSERT INTO "${table}" VALUE {'pk': 'batch', 'sk': 1}` },
        ],
      }),
    );
    assert.deepEqual(out.Responses[0], { TableName: table });
    assert.equal(out.Responses[1].Error.Code, "DuplicateItem");
  });

  test("ExecuteTransaction is all or nothing", async () => {
    await run(`INSERT INTO "${table}" VALUE {'pk': 'tx', 'sk': 1, 'n': 1}`);
    const err = await expectError(
      () =>
        ctx.doc.send(
          new ExecuteTransactionCommand({
            TransactStatements: [
              { Statement: `UPDATE "${table}" SET n = 2 WHERE pk = 'tx' AND sk = 1` },
              { Statement: `UPDATE "${table}" SET n = 2 WHERE pk = 'tx' AND sk = 99` },
            ],
          }),
        ),
      "TransactionCanceledException",
    );
    assert.deepEqual(
      err.CancellationReasons.map((r) => r.Code),
      ["None", "ConditionalCheckFailed"],
    );
    const read = await ctx.doc.send(
      new ExecuteTransactionCommand({
        TransactStatements: [{ Statement: `SELECT n FROM "${table}" WHERE pk = ? AND sk = ?`, Parameters: ["tx", 1] }],
      }),
    );
    assert.deepEqual(read.Responses, [{ Item: { n: 1 } }]);
  });
});
