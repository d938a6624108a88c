// On-demand backups and continuous backups through the JS SDK v3: the SDK's
// own typed errors (BackupNotFoundException, TableNotFoundException,
// TableAlreadyExistsException), dates parsed from the answers, a restore
// with its items and GSI, and point-in-time recovery settings. Same
// expectations as tests/python/test_backups.py.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  BackupNotFoundException,
  CreateBackupCommand,
  DeleteBackupCommand,
  DescribeBackupCommand,
  DescribeContinuousBackupsCommand,
  DescribeTableCommand,
  ListBackupsCommand,
  QueryCommand,
  RestoreTableFromBackupCommand,
  TableAlreadyExistsException,
  TableNotFoundException,
  UpdateContinuousBackupsCommand,
} from "@aws-sdk/client-dynamodb";
import { PutCommand } from "@aws-sdk/lib-dynamodb";

import { attributes, createTable, expectError, keySchema, tableName, useServer, waitActive } from "./lib/server.js";

const ctx = useServer();

describe("on-demand backups", () => {
  test("a backup restores to a new table with its items and GSI", async () => {
    const name = await createTable(ctx.client, {
      AttributeDefinitions: attributes({ pk: "S", city: "S" }),
      GlobalSecondaryIndexes: [
        { IndexName: "by-city", KeySchema: keySchema(["city", "HASH"]), Projection: { ProjectionType: "ALL" } },
      ],
    });
    for (const [pk, city] of [["a", "Paris"], ["b", "Lyon"], ["c", "Paris"]]) {
      await ctx.doc.send(new PutCommand({ TableName: name, Item: { pk, city } }));
    }
    const { BackupDetails: details } = await ctx.client.send(
      new CreateBackupCommand({ TableName: name, BackupName: "node-backup" }),
    );
    assert.equal(details.BackupStatus, "CREATING", "CreateBackup always answers CREATING (ack-api-quirks DDB-BACKUP-003)");
    assert.equal(details.BackupType, "USER");
    assert.ok(details.BackupCreationDateTime instanceof Date);
    assert.match(details.BackupArn, new RegExp(`:table/${name}/backup/\\d{14}-[0-9a-f]{8}$`));
    await ctx.doc.send(new PutCommand({ TableName: name, Item: { pk: "d", city: "Paris" } }));

    const listed = await ctx.client.send(new ListBackupsCommand({ TableName: name }));
    assert.deepEqual(listed.BackupSummaries.map((b) => b.BackupArn), [details.BackupArn]);
    const described = await ctx.client.send(new DescribeBackupCommand({ BackupArn: details.BackupArn }));
    assert.equal(described.BackupDescription.SourceTableDetails.ItemCount, 3);

    const target = tableName("restored");
    const restored = await ctx.client.send(
      new RestoreTableFromBackupCommand({ TargetTableName: target, BackupArn: details.BackupArn }),
    );
    assert.equal(restored.TableDescription.TableStatus, "CREATING");
    assert.equal(restored.TableDescription.RestoreSummary.SourceBackupArn, details.BackupArn);
    assert.equal(restored.TableDescription.RestoreSummary.RestoreInProgress, true);
    const table = await waitActive(ctx.client, target);
    assert.equal(table.ItemCount, 3);
    const paris = await ctx.client.send(
      new QueryCommand({
        TableName: target,
        IndexName: "by-city",
        KeyConditionExpression: "city = :c",
        ExpressionAttributeValues: { ":c": { S: "Paris" } },
      }),
    );
    assert.deepEqual(paris.Items.map((i) => i.pk.S).sort(), ["a", "c"]);

    await expectError(
      () => ctx.client.send(new RestoreTableFromBackupCommand({ TargetTableName: target, BackupArn: details.BackupArn })),
      "TableAlreadyExistsException",
      `Table already exists: ${target}`,
    ).then((e) => assert.ok(e instanceof TableAlreadyExistsException));

    const deleted = await ctx.client.send(new DeleteBackupCommand({ BackupArn: details.BackupArn }));
    assert.equal(deleted.BackupDescription.BackupDetails.BackupStatus, "DELETED");
    const gone = await expectError(
      () => ctx.client.send(new DescribeBackupCommand({ BackupArn: details.BackupArn })),
      "BackupNotFoundException",
      `Backup not found: ${details.BackupArn}`,
    );
    assert.ok(gone instanceof BackupNotFoundException);
  });

  test("a missing table is TableNotFoundException", async () => {
    const missing = tableName("missing");
    const err = await expectError(
      () => ctx.client.send(new CreateBackupCommand({ TableName: missing, BackupName: "nope" })),
      "TableNotFoundException",
      `Table not found: ${missing}`,
    );
    assert.ok(err instanceof TableNotFoundException);
  });
});

describe("continuous backups", () => {
  test("point-in-time recovery is off until turned on", async () => {
    const name = await createTable(ctx.client);
    const off = await ctx.client.send(new DescribeContinuousBackupsCommand({ TableName: name }));
    assert.deepEqual(off.ContinuousBackupsDescription, {
      ContinuousBackupsStatus: "ENABLED",
      PointInTimeRecoveryDescription: { PointInTimeRecoveryStatus: "DISABLED" },
    });
    const on = await ctx.client.send(
      new UpdateContinuousBackupsCommand({
        TableName: name,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true, RecoveryPeriodInDays: 10 },
      }),
    );
    const pitr = on.ContinuousBackupsDescription.PointInTimeRecoveryDescription;
    assert.equal(pitr.PointInTimeRecoveryStatus, "ENABLED");
    assert.equal(pitr.RecoveryPeriodInDays, 10);
    assert.ok(pitr.EarliestRestorableDateTime instanceof Date);
    assert.ok(pitr.EarliestRestorableDateTime <= pitr.LatestRestorableDateTime);
    const table = (await ctx.client.send(new DescribeTableCommand({ TableName: name }))).Table;
    assert.equal(table.RestoreSummary, undefined);
  });
});
