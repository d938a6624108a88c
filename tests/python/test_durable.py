"""`dynaburst serve --data-dir`: tables with every setting, and their items,
are the same after a clean restart (SIGTERM) and after a crash (SIGKILL);
a second server on the same directory is refused."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest

import boto3

from conftest import ServerProcess, away_from_utc_midnight, boto_args, make_client

SETTINGS_TABLE = "durable-settings"
ITEMS_TABLE = "durable-items"
DROPPED_TABLE = "durable-dropped"


def start(data_dir):
    return ServerProcess(["--data-dir", str(data_dir), "--ttl-interval", "0"])


def end(srv, how):
    """Stops `srv` cleanly (SIGTERM, exit 0) or kills it (SIGKILL)."""
    if how == "clean":
        assert srv.stop() == 0
    else:
        srv.proc.kill()
        srv.proc.wait()


def wait_active(ddb, name):
    for _ in range(400):
        if ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE":
            return
        time.sleep(0.05)
    raise AssertionError(f"{name} never became ACTIVE")


def on_demand_table(ddb, name, defs=(), **extra):
    """An on-demand table with a string hash key `id` (and `defs`), ACTIVE."""
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}, *defs],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        **extra,
    )
    wait_active(ddb, name)


def build(ddb):
    """Tables with every setting the catalog keeps, and items of every type."""
    ddb.create_table(
        TableName=SETTINGS_TABLE,
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "g", "AttributeType": "S"},
            {"AttributeName": "l", "AttributeType": "B"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 700, "WriteCapacityUnits": 900},
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "y"]},
                "ProvisionedThroughput": {"ReadCapacityUnits": 300, "WriteCapacityUnits": 400},
                "WarmThroughput": {"ReadUnitsPerSecond": 5000, "WriteUnitsPerSecond": 6000},
            }
        ],
        LocalSecondaryIndexes=[
            {
                "IndexName": "by-l",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        Tags=[{"Key": "team", "Value": "storage"}, {"Key": "empty", "Value": ""}],
        TableClass="STANDARD_INFREQUENT_ACCESS",
        SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": "alias/storage"},
        DeletionProtectionEnabled=True,
    )
    wait_active(ddb, SETTINGS_TABLE)
    ddb.update_time_to_live(
        TableName=SETTINGS_TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"}
    )
    # Raised throughput (the catalog keeps when it was last raised).
    ddb.update_table(
        TableName=SETTINGS_TABLE, ProvisionedThroughput={"ReadCapacityUnits": 800, "WriteCapacityUnits": 1000}
    )
    wait_active(ddb, SETTINGS_TABLE)
    # A lowered GSI (it counts its decreases apart from the table's).
    ddb.update_table(
        TableName=SETTINGS_TABLE,
        GlobalSecondaryIndexUpdates=[
            {
                "Update": {
                    "IndexName": "by-g",
                    "ProvisionedThroughput": {"ReadCapacityUnits": 250, "WriteCapacityUnits": 400},
                }
            }
        ],
    )
    wait_active(ddb, SETTINGS_TABLE)
    ddb.tag_resource(
        ResourceArn=ddb.describe_table(TableName=SETTINGS_TABLE)["Table"]["TableArn"],
        Tags=[{"Key": "added", "Value": "later"}],
    )
    for i in range(20):
        ddb.put_item(
            TableName=SETTINGS_TABLE,
            Item={
                "pk": {"S": f"p{i % 4}"},
                "sk": {"N": str(i)},
                "g": {"S": f"g{i % 3}"},
                "l": {"B": bytes([i])},
                "x": {"S": "x" * i},
                "expires": {"N": "4102444800"},
            },
        )
    # An on-demand, hash-only table with items of every type, some
    # overwritten, updated and deleted.
    on_demand_table(
        ddb,
        ITEMS_TABLE,
        defs=[{"AttributeName": "v", "AttributeType": "N"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-v",
                "KeySchema": [{"AttributeName": "v", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
                "OnDemandThroughput": {"MaxReadRequestUnits": 900},
                "WarmThroughput": {"ReadUnitsPerSecond": 15000},
            }
        ],
    )
    every = {
        "s": {"S": "héllo"},
        "n": {"N": "-1.5E-100"},
        "b": {"B": b"\x00\xff"},
        "t": {"BOOL": True},
        "z": {"NULL": True},
        "ss": {"SS": ["a", "b"]},
        "ns": {"NS": ["1", "2.5"]},
        "bs": {"BS": [b"\x01", b"\x02"]},
        "l": {"L": [{"S": "x"}, {"M": {"deep": {"L": [{"N": "7"}]}}}]},
        "m": {"M": {"k": {"S": "v"}}},
    }
    for i in range(200):
        ddb.put_item(TableName=ITEMS_TABLE, Item={"id": {"S": f"i{i:03}"}, "v": {"N": str(i)}, **every})
    for i in range(0, 200, 3):
        ddb.update_item(
            TableName=ITEMS_TABLE,
            Key={"id": {"S": f"i{i:03}"}},
            UpdateExpression="SET v = v + :one REMOVE ss",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
    for i in range(0, 200, 7):
        ddb.delete_item(TableName=ITEMS_TABLE, Key={"id": {"S": f"i{i:03}"}})
    ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": ITEMS_TABLE, "Item": {"id": {"S": "tx-a"}, "v": {"N": "1"}}}},
            {"Put": {"TableName": SETTINGS_TABLE, "Item": {"pk": {"S": "tx"}, "sk": {"N": "1"}}}},
        ]
    )
    # A table created and dropped stays dropped.
    on_demand_table(ddb, DROPPED_TABLE)
    ddb.put_item(TableName=DROPPED_TABLE, Item={"id": {"S": "gone"}})
    ddb.delete_table(TableName=DROPPED_TABLE)


def scan_all(ddb, table):
    items, start = [], None
    while True:
        kwargs = {"TableName": table, "ConsistentRead": True}
        if start:
            kwargs["ExclusiveStartKey"] = start
        page = ddb.scan(**kwargs)
        items.extend(page["Items"])
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def snapshot(ddb):
    """Everything a client can see of the tables (no clocks of ours: the
    catalog keeps the tables' own timestamps, so they must match too)."""
    out = {"tables": ddb.list_tables()["TableNames"]}
    for table in (SETTINGS_TABLE, ITEMS_TABLE):
        desc = ddb.describe_table(TableName=table)["Table"]
        out[table] = {
            "describe": desc,
            "tags": ddb.list_tags_of_resource(ResourceArn=desc["TableArn"])["Tags"],
            "ttl": ddb.describe_time_to_live(TableName=table)["TimeToLiveDescription"],
            "items": scan_all(ddb, table),
            "gsi": sorted(
                (i["g"]["S"], i["pk"]["S"], i["sk"]["N"])
                for i in ddb.query(
                    TableName=SETTINGS_TABLE,
                    IndexName="by-g",
                    KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "g1"}},
                )["Items"]
            ),
        }
    return out


@pytest.mark.parametrize("how", ["clean", "kill"])
def test_settings_and_items_survive_a_restart(tmp_path, how):
    # The GSI's NumberOfDecreasesToday must not turn 0 between the two
    # snapshots.
    away_from_utc_midnight()
    srv = start(tmp_path)
    try:
        ddb = make_client(srv.url)
        build(ddb)
        before = snapshot(ddb)
    finally:
        end(srv, how)
    srv = start(tmp_path)
    try:
        ddb = make_client(srv.url)
        after = snapshot(ddb)
        assert after["tables"] == [ITEMS_TABLE, SETTINGS_TABLE]
        for table in (SETTINGS_TABLE, ITEMS_TABLE):
            assert after[table] == before[table], table
        settings = after[SETTINGS_TABLE]
        desc = settings["describe"]
        # Spot checks that the comparison compared something.
        assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 800
        assert desc["ProvisionedThroughput"]["WriteCapacityUnits"] == 1000
        assert "LastIncreaseDateTime" in desc["ProvisionedThroughput"]
        assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
        assert [i["IndexName"] for i in desc["GlobalSecondaryIndexes"]] == ["by-g"]
        gsi_throughput = desc["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]
        assert (gsi_throughput["ReadCapacityUnits"], gsi_throughput["WriteCapacityUnits"]) == (250, 400)
        assert gsi_throughput["NumberOfDecreasesToday"] == 1 and "LastDecreaseDateTime" in gsi_throughput
        assert desc["ProvisionedThroughput"]["NumberOfDecreasesToday"] == 0
        assert desc["GlobalSecondaryIndexes"][0]["WarmThroughput"]["WriteUnitsPerSecond"] == 6000
        assert [i["IndexName"] for i in desc["LocalSecondaryIndexes"]] == ["by-l"]
        assert desc["TableClassSummary"] == {"TableClass": "STANDARD_INFREQUENT_ACCESS"}
        assert desc["SSEDescription"]["KMSMasterKeyArn"].startswith("arn:aws:kms:us-east-1:000000000000:key/")
        assert desc["DeletionProtectionEnabled"] is True
        assert settings["ttl"] == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
        assert sorted((t["Key"], t["Value"]) for t in settings["tags"]) == [
            ("added", "later"),
            ("empty", ""),
            ("team", "storage"),
        ]
        assert desc["ItemCount"] == 21 and desc["TableSizeBytes"] > 0
        items = after[ITEMS_TABLE]
        assert items["describe"]["ItemCount"] == len(items["items"]) == 200 - 29 + 1
        by_v = items["describe"]["GlobalSecondaryIndexes"][0]
        assert by_v["OnDemandThroughput"] == {"MaxReadRequestUnits": 900}
        assert by_v["WarmThroughput"] == {"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
        by_id = {i["id"]["S"]: i for i in items["items"]}
        assert by_id["i003"]["v"] == {"N": "4"} and "ss" not in by_id["i003"]
        assert by_id["i001"]["l"] == {"L": [{"S": "x"}, {"M": {"deep": {"L": [{"N": "7"}]}}}]}
        assert "i007" not in by_id
        # The database takes writes after the restart.
        ddb.put_item(TableName=ITEMS_TABLE, Item={"id": {"S": "after"}, "v": {"N": str(Decimal("1.5"))}})
        assert ddb.get_item(TableName=ITEMS_TABLE, Key={"id": {"S": "after"}})["Item"]["v"] == {"N": "1.5"}
    finally:
        srv.stop()


def test_a_second_server_on_the_same_directory_is_refused(tmp_path):
    first = start(tmp_path)
    try:
        with pytest.raises(RuntimeError) as refused:
            start(tmp_path)
        message = str(refused.value)
        assert "exited before announcing its port" in message
        assert f"data directory {tmp_path} is in use by another dynaburst server" in message
        # The first server is unharmed.
        assert make_client(first.url).list_tables()["TableNames"] == []
    finally:
        first.stop()


def region_client(url, region):
    return boto3.client("dynamodb", **{**boto_args(url), "region_name": region})


# An AWS region and names DynamoDB Local users configure their SDKs with
# (DynamoDB Local takes any region).
OTHER_REGIONS = ("eu-west-1", "localhost", "fakeRegion")


@pytest.mark.parametrize("how", ["clean", "kill"])
def test_tables_of_every_region_survive_a_restart(tmp_path, how):
    srv = start(tmp_path)
    try:
        home = make_client(srv.url)
        on_demand_table(home, "shared-name")
        home.put_item(TableName="shared-name", Item={"id": {"S": "k"}, "region": {"S": "home"}})
        for region in OTHER_REGIONS:
            ddb = region_client(srv.url, region)
            # The same name in another region is another table.
            on_demand_table(ddb, "shared-name", StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
            on_demand_table(ddb, f"only-{region.lower()}")
            ddb.put_item(TableName="shared-name", Item={"id": {"S": "k"}, "region": {"S": region}})
            ddb.batch_write_item(
                RequestItems={
                    f"only-{region.lower()}": [
                        {"PutRequest": {"Item": {"id": {"S": f"i{n:02}"}, "n": {"N": str(n)}}}} for n in range(25)
                    ]
                }
            )
            ddb.delete_item(TableName=f"only-{region.lower()}", Key={"id": {"S": "i07"}})
            ddb.create_backup(TableName="shared-name", BackupName=f"b-{region}")
    finally:
        end(srv, how)
    srv = start(tmp_path)
    try:
        home = make_client(srv.url)
        assert home.list_tables()["TableNames"] == ["shared-name"]
        assert home.get_item(TableName="shared-name", Key={"id": {"S": "k"}})["Item"]["region"] == {"S": "home"}
        assert home.list_backups()["BackupSummaries"] == []
        for region in OTHER_REGIONS:
            ddb = region_client(srv.url, region)
            only = f"only-{region.lower()}"
            assert ddb.list_tables()["TableNames"] == [only, "shared-name"], region
            got = ddb.get_item(TableName="shared-name", Key={"id": {"S": "k"}}, ConsistentRead=True)
            assert got["Item"]["region"] == {"S": region}
            desc = ddb.describe_table(TableName="shared-name")["Table"]
            assert desc["TableArn"] == f"arn:aws:dynamodb:{region}:000000000000:table/shared-name"
            assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
            assert desc["ItemCount"] == 1
            items = scan_all(ddb, only)
            assert sorted(i["id"]["S"] for i in items) == [f"i{n:02}" for n in range(25) if n != 7]
            assert ddb.describe_table(TableName=only)["Table"]["ItemCount"] == 24
            backups = ddb.list_backups()["BackupSummaries"]
            assert [(b["TableName"], b["BackupName"]) for b in backups] == [("shared-name", f"b-{region}")]
            assert backups[0]["BackupArn"].startswith(f"arn:aws:dynamodb:{region}:000000000000:table/shared-name/backup/")
            # Writes after the restart land in the region's own table.
            ddb.put_item(TableName=only, Item={"id": {"S": "after"}})
            assert ddb.describe_table(TableName=only)["Table"]["ItemCount"] == 25
        # A region first seen after the restart starts empty, and keeps
        # what it is given.
        fresh = region_client(srv.url, "ap-south-2")
        assert fresh.list_tables()["TableNames"] == []
        on_demand_table(fresh, "late")
        fresh.put_item(TableName="late", Item={"id": {"S": "x"}})
    finally:
        end(srv, how)
    srv = start(tmp_path)
    try:
        fresh = region_client(srv.url, "ap-south-2")
        assert fresh.get_item(TableName="late", Key={"id": {"S": "x"}})["Item"] == {"id": {"S": "x"}}
        assert make_client(srv.url).list_tables()["TableNames"] == ["shared-name"]
    finally:
        srv.stop()
