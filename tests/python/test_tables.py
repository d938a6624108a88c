"""Control plane: CreateTable, DescribeTable, ListTables, UpdateTable, DeleteTable."""

from __future__ import annotations

import datetime as dt
import re
import time

import pytest

from conftest import away_from_utc_midnight, expect_error, unique_name, wait_active

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def wait_gone(ddb, name, timeout=20.0):
    """Real DynamoDB shows DELETING for a while; wait until the table is gone."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status = ddb.describe_table(TableName=name)["Table"]["TableStatus"]
        except ddb.exceptions.ResourceNotFoundException:
            return
        assert status == "DELETING", f"deleted table reports {status}"
        time.sleep(0.05)
    raise AssertionError(f"table {name} still exists {timeout}s after DeleteTable")


def create(ddb, name, attrs, schema, **kw):
    kw.setdefault("BillingMode", "PAY_PER_REQUEST")
    return ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in attrs],
        KeySchema=[{"AttributeName": a, "KeyType": k} for a, k in schema],
        **kw,
    )


@pytest.mark.parametrize("key_type", ["S", "N", "B"])
def test_create_hash_table_each_key_type(ddb, make_table, key_type):
    name = make_table(hash_key=("id", key_type))
    desc = ddb.describe_table(TableName=name)["Table"]
    assert desc["TableName"] == name
    assert desc["TableStatus"] == "ACTIVE"
    assert desc["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert desc["AttributeDefinitions"] == [{"AttributeName": "id", "AttributeType": key_type}]


@pytest.mark.parametrize("hash_type,range_type", [("S", "S"), ("S", "N"), ("N", "B"), ("B", "S")])
def test_create_hash_range_table(ddb, make_table, hash_type, range_type):
    name = make_table(hash_key=("h", hash_type), range_key=("r", range_type))
    desc = ddb.describe_table(TableName=name)["Table"]
    assert desc["KeySchema"] == [
        {"AttributeName": "h", "KeyType": "HASH"},
        {"AttributeName": "r", "KeyType": "RANGE"},
    ]
    assert sorted(desc["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == [
        {"AttributeName": "h", "AttributeType": hash_type},
        {"AttributeName": "r", "AttributeType": range_type},
    ]


def test_create_table_response_description(ddb, make_table):
    name = unique_name()
    before = dt.datetime.now(dt.timezone.utc)
    resp = create(ddb, name, [("pk", "S")], [("pk", "HASH")])
    make_table.created.append(name)
    td = resp["TableDescription"]
    assert td["TableName"] == name
    # Real DynamoDB answers CREATING; a local server may already be ACTIVE.
    assert td["TableStatus"] in ("CREATING", "ACTIVE")
    assert td["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    assert td["TableArn"] == f"arn:aws:dynamodb:us-east-1:000000000000:table/{name}"
    assert td["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    created = td["CreationDateTime"]
    assert isinstance(created, dt.datetime)
    assert before - dt.timedelta(seconds=5) <= created <= dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=5)


def test_describe_on_demand_table_fields(ddb, table):
    desc = ddb.describe_table(TableName=table)["Table"]
    assert desc["TableName"] == table
    assert desc["TableStatus"] == "ACTIVE"
    assert desc["TableArn"] == f"arn:aws:dynamodb:us-east-1:000000000000:table/{table}"
    assert UUID_RE.match(desc["TableId"]), desc.get("TableId")
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    # On-demand tables report zero provisioned throughput.
    pt = desc["ProvisionedThroughput"]
    assert pt["ReadCapacityUnits"] == 0
    assert pt["WriteCapacityUnits"] == 0
    assert pt["NumberOfDecreasesToday"] == 0
    assert desc["ItemCount"] == 0
    assert desc["TableSizeBytes"] == 0
    assert isinstance(desc["CreationDateTime"], dt.datetime)


def test_describe_provisioned_table_fields(ddb, make_table):
    name = make_table(billing="PROVISIONED", rcu=5, wcu=7)
    desc = ddb.describe_table(TableName=name)["Table"]
    pt = desc["ProvisionedThroughput"]
    assert pt["ReadCapacityUnits"] == 5
    assert pt["WriteCapacityUnits"] == 7
    assert pt["NumberOfDecreasesToday"] == 0
    # Real DynamoDB may omit BillingModeSummary for provisioned tables; when
    # present it must say PROVISIONED.
    assert desc.get("BillingModeSummary", {"BillingMode": "PROVISIONED"})["BillingMode"] == "PROVISIONED"
    assert desc["TableStatus"] == "ACTIVE"


def test_create_provisioned_by_default_when_billing_mode_omitted(ddb, make_table):
    name = unique_name()
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
    )
    make_table.created.append(name)
    desc = wait_active(ddb, name)
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 3
    assert desc["ProvisionedThroughput"]["WriteCapacityUnits"] == 4
    assert desc.get("BillingModeSummary", {"BillingMode": "PROVISIONED"})["BillingMode"] == "PROVISIONED"


def test_create_existing_table_is_resource_in_use(ddb, table):
    expect_error(
        lambda: create(ddb, table, [("pk", "S")], [("pk", "HASH")]),
        "ResourceInUseException",
        f"Table already exists: {table}",
    )


def test_create_provisioned_without_throughput(ddb):
    name = unique_name()
    expect_error(
        lambda: create(ddb, name, [("pk", "S")], [("pk", "HASH")], BillingMode="PROVISIONED"),
        "ValidationException",
        "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
    )


def test_create_on_demand_with_throughput(ddb):
    name = unique_name()
    expect_error(
        lambda: create(
            ddb,
            name,
            [("pk", "S")],
            [("pk", "HASH")],
            BillingMode="PAY_PER_REQUEST",
            ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        ),
        "ValidationException",
        "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
    )


def test_create_with_unused_attribute_definition(ddb):
    name = unique_name()
    expect_error(
        lambda: create(ddb, name, [("pk", "S"), ("extra", "S")], [("pk", "HASH")]),
        "ValidationException",
        "One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions",
    )


def test_create_key_attribute_not_defined(ddb):
    name = unique_name()
    # Live wording lists the keys and definitions; assert the stable part.
    expect_error(
        lambda: create(ddb, name, [("other", "S")], [("pk", "HASH")]),
        "ValidationException",
        startswith="One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions.",
    )


def test_create_with_three_key_elements_shows_them_as_dynamodb_does(ddb):
    # S5: the elements as DynamoDB's Java objects.
    expect_error(
        lambda: create(ddb, unique_name(), [("pk", "S"), ("sk", "S")], [("pk", "HASH"), ("sk", "RANGE"), ("pk", "RANGE")]),
        "ValidationException",
        "1 validation error detected: Value '[KeySchemaElement(attributeName=pk, keyType=HASH), "
        "KeySchemaElement(attributeName=sk, keyType=RANGE), KeySchemaElement(attributeName=pk, keyType=RANGE)]' "
        "at 'keySchema' failed to satisfy constraint: Member must have length less than or equal to 2",
    )


def expect_table_not_found(fn, name):
    """fn() must fail with ResourceNotFoundException naming table `name`."""
    return expect_error(fn, "ResourceNotFoundException", f"Requested resource not found: Table: {name} not found")


@pytest.mark.parametrize("operation", ["describe_table", "delete_table"])
def test_missing_table(ddb, operation):
    name = unique_name("missing")
    expect_table_not_found(lambda: getattr(ddb, operation)(TableName=name), name)


def test_delete_table_then_not_found(ddb, make_table):
    name = make_table()
    resp = ddb.delete_table(TableName=name)
    td = resp["TableDescription"]
    assert td["TableName"] == name
    assert td["TableStatus"] == "DELETING"
    # DeleteTable describes less than DescribeTable (ScyllaDB's Alternator
    # suite, run against DynamoDB: test_delete_table_description).
    for member in ("CreationDateTime", "KeySchema", "AttributeDefinitions"):
        assert member not in td, member
    assert td["TableArn"].endswith(f":table/{name}")
    assert td["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert (td["ItemCount"], td["TableSizeBytes"]) == (0, 0)
    wait_gone(ddb, name)
    expect_table_not_found(lambda: ddb.describe_table(TableName=name), name)
    expect_error(
        lambda: ddb.get_item(TableName=name, Key={"pk": {"S": "a"}}),
        "ResourceNotFoundException",
        "Requested resource not found",
    )
    assert name not in list_all_tables(ddb)[0]


PROTECTED = "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first."


def test_deletion_protection_refuses_delete_table_until_turned_off(ddb, make_table):
    name = make_table(DeletionProtectionEnabled=True)
    assert ddb.describe_table(TableName=name)["Table"]["DeletionProtectionEnabled"] is True
    expect_error(lambda: ddb.delete_table(TableName=name), "ValidationException", PROTECTED)
    assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"
    out = ddb.update_table(TableName=name, DeletionProtectionEnabled=False)["TableDescription"]
    assert out["DeletionProtectionEnabled"] is False
    ddb.delete_table(TableName=name)
    wait_gone(ddb, name)
    # Off by default; UpdateTable alone turns it on.
    other = make_table()
    assert ddb.describe_table(TableName=other)["Table"]["DeletionProtectionEnabled"] is False
    ddb.update_table(TableName=other, DeletionProtectionEnabled=True)
    expect_error(lambda: ddb.delete_table(TableName=other), "ValidationException", PROTECTED)
    ddb.update_table(TableName=other, DeletionProtectionEnabled=False)


INVALID_CLASS = (
    "Invalid table-class parameter provided. Please try again with a valid table-class value: "
    "[STANDARD, STANDARD_INFREQUENT_ACCESS]."
)
P = "One or more parameter values were invalid: "


def test_encryption_class_and_protection_change_alone_and_nothing_is_refused(ddb, make_table):
    # DynamoDB's rules and messages, from ack-api-quirks' catalogue of them
    # (DDB-TABLE-442).
    name = make_table()
    for setting, what in [
        ({"SSESpecification": {"Enabled": True}}, "Server-Side Encryption"),
        ({"TableClass": "STANDARD"}, "TableClass"),
        ({"DeletionProtectionEnabled": True}, "DeletionProtection"),
    ]:
        expect_error(
            lambda: ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False}, **setting),
            "ValidationException",
            f"{P}{what} modification must be the only operation in the request",
        )
    expect_error(
        lambda: ddb.update_table(TableName=name, TableClass="STANDARD", DeletionProtectionEnabled=True),
        "ValidationException",
        f"{P}TableClass modification must be the only operation in the request",
    )
    updatable = (
        "ProvisionedThroughput, BillingMode, UpdateStreamEnabled, {}SSESpecification, ReplicaUpdates, "
        "MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, "
        "OnDemandThroughput, WarmThroughput or TableClass"
    )
    expect_error(
        lambda: ddb.update_table(TableName=name),
        "ValidationException",
        f"At least one of {updatable.format('GlobalSecondaryIndexUpdates, ')} is required",
    )
    # An empty GlobalSecondaryIndexUpdates counts as absent; with another
    # member it is refused as empty (ack-api-quirks DDB-TABLE-015, -359).
    expect_error(
        lambda: ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[]),
        "ValidationException",
        f"At least one of {updatable.format('GlobalSecondaryIndexUpdates, ')} is required",
    )
    expect_error(
        lambda: ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[], DeletionProtectionEnabled=True),
        "ValidationException",
        "One or more parameter values were invalid: List of GlobalSecondaryIndexUpdates is empty",
    )
    # The request is checked before the table is looked up.
    expect_error(
        lambda: ddb.update_table(TableName=unique_name("missing")),
        "ValidationException",
        f"At least one of {updatable.format('GlobalSecondaryIndexUpdates, ')} is required",
    )


def test_attribute_definitions_name_each_attribute_once(ddb, make_table):
    expect_error(
        lambda: make_table(
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "pk", "AttributeType": "N"},
            ]
        ),
        "ValidationException",
        "Attribute Name is duplicated: pk",
    )


def test_table_class_is_kept_and_shown_once_named(ddb, ddb_raw, make_table):
    # A table that never named a class shows none (ScyllaDB's Alternator
    # suite, run against DynamoDB: test_tableclass.py).
    plain = make_table()
    assert "TableClassSummary" not in ddb.describe_table(TableName=plain)["Table"]
    ia = make_table(TableClass="STANDARD_INFREQUENT_ACCESS")
    assert ddb.describe_table(TableName=ia)["Table"]["TableClassSummary"] == {"TableClass": "STANDARD_INFREQUENT_ACCESS"}
    std = make_table(TableClass="STANDARD")
    assert ddb.describe_table(TableName=std)["Table"]["TableClassSummary"] == {"TableClass": "STANDARD"}
    # UpdateTable may change nothing but the class, and stamps the change.
    ddb.update_table(TableName=plain, TableClass="STANDARD_INFREQUENT_ACCESS")
    summary = ddb.describe_table(TableName=plain)["Table"]["TableClassSummary"]
    assert summary["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    assert isinstance(summary["LastUpdateDateTime"], dt.datetime)
    # DynamoDB's own message for a class it does not know (case matters).
    expect_error(lambda: ddb_raw.update_table(TableName=plain, TableClass="junk"), "ValidationException", INVALID_CLASS)
    expect_error(lambda: make_table(TableClass="standard"), "ValidationException", INVALID_CLASS)


KEY_ID = "1234abcd-12ab-34cd-56ef-1234567890ab"


def test_server_side_encryption_with_a_kms_key_is_described_kept_and_restored(ddb, make_table):
    owned = make_table()
    assert "SSEDescription" not in ddb.describe_table(TableName=owned)["Table"]
    account = ddb.describe_table(TableName=owned)["Table"]["TableArn"].split(":")[4]
    # The AWS managed key: one per account and region.
    managed = make_table(SSESpecification={"Enabled": True})
    sse = ddb.describe_table(TableName=managed)["Table"]["SSEDescription"]
    assert (sse["Status"], sse["SSEType"]) == ("ENABLED", "KMS")
    key = re.escape(f"arn:aws:kms:us-east-1:{account}:key/")
    assert re.fullmatch(key + r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", sse["KMSMasterKeyArn"])
    again = make_table(SSESpecification={"Enabled": True, "SSEType": "KMS"})
    assert ddb.describe_table(TableName=again)["Table"]["SSEDescription"] == sse
    # A key named by id or by alias: described by the key's ARN.
    by_id = make_table(SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": KEY_ID})
    arn = ddb.describe_table(TableName=by_id)["Table"]["SSEDescription"]["KMSMasterKeyArn"]
    assert arn == f"arn:aws:kms:us-east-1:{account}:key/{KEY_ID}"
    aliased = [
        make_table(SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": "alias/orders"})
        for _ in range(2)
    ]
    arns = [ddb.describe_table(TableName=t)["Table"]["SSEDescription"]["KMSMasterKeyArn"] for t in aliased]
    assert arns[0] == arns[1] != sse["KMSMasterKeyArn"]
    assert re.fullmatch(key + r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", arns[0])
    # DynamoDB's rules for the specification.
    for spec, message in [
        ({"Enabled": True, "KMSMasterKeyId": KEY_ID}, "SSEType KMS is required if KMSMasterKeyId is specified"),
        ({"Enabled": True, "SSEType": "AES256"}, "SSEType AES256 is not supported"),
        ({"Enabled": False, "SSEType": "KMS"}, "SSEType can not be specified if Enabled is false"),
        ({"KMSMasterKeyId": KEY_ID}, "KMSMasterKeyId can not be specified if Enabled is false"),
    ]:
        expect_error(lambda: make_table(SSESpecification=spec), "ValidationException", P + message)
    # Enabled false is the AWS owned key: nothing to describe.
    off = make_table(SSESpecification={"Enabled": False})
    assert "SSEDescription" not in ddb.describe_table(TableName=off)["Table"]
    # UpdateTable switches keys, and back to an owned key.
    other = f"arn:aws:kms:us-east-1:{account}:key/other"
    out = ddb.update_table(TableName=owned, SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": other})
    assert out["TableDescription"]["SSEDescription"]["KMSMasterKeyArn"] == other
    expect_error(
        lambda: ddb.update_table(
            TableName=owned, SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": other}
        ),
        "ValidationException",
        P + "Table is already encrypted with given KMSMasterKeyId. Use KMSMasterKeyId parameter if you want to "
        "change Master Key",
    )
    ddb.update_table(TableName=owned, SSESpecification={"Enabled": False})
    assert "SSEDescription" not in ddb.describe_table(TableName=owned)["Table"]
    expect_error(
        lambda: ddb.update_table(TableName=owned, SSESpecification={"Enabled": False}),
        "ValidationException",
        P + "Table is already encrypted by default",
    )
    # A backup records it, and a restore keeps it unless overridden.
    ddb.put_item(TableName=by_id, Item={"pk": {"S": "k"}})
    backup = ddb.create_backup(TableName=by_id, BackupName="encrypted")["BackupDetails"]["BackupArn"]
    features = ddb.describe_backup(BackupArn=backup)["BackupDescription"]["SourceTableFeatureDetails"]
    assert features["SSEDescription"]["KMSMasterKeyArn"] == arn
    kept, plain = unique_name("restored"), unique_name("restored")
    try:
        ddb.restore_table_from_backup(TargetTableName=kept, BackupArn=backup)
        assert ddb.describe_table(TableName=kept)["Table"]["SSEDescription"]["KMSMasterKeyArn"] == arn
        ddb.restore_table_from_backup(
            TargetTableName=plain, BackupArn=backup, SSESpecificationOverride={"Enabled": False}
        )
        assert "SSEDescription" not in ddb.describe_table(TableName=plain)["Table"]
        assert ddb.get_item(TableName=plain, Key={"pk": {"S": "k"}})["Item"] == {"pk": {"S": "k"}}
    finally:
        for name in (kept, plain):
            ddb.delete_table(TableName=name)


def test_table_can_be_recreated_after_delete(ddb, make_table):
    name = make_table()
    ddb.put_item(TableName=name, Item={"pk": {"S": "old"}})
    ddb.delete_table(TableName=name)
    wait_gone(ddb, name)
    make_table(name=name, hash_key=("id", "N"))
    desc = ddb.describe_table(TableName=name)["Table"]
    assert desc["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert ddb.scan(TableName=name)["Items"] == []


def test_item_operations_on_missing_table(ddb):
    name = unique_name("missing")
    for call in (
        lambda: ddb.put_item(TableName=name, Item={"pk": {"S": "a"}}),
        lambda: ddb.get_item(TableName=name, Key={"pk": {"S": "a"}}),
        lambda: ddb.delete_item(TableName=name, Key={"pk": {"S": "a"}}),
        lambda: ddb.update_item(TableName=name, Key={"pk": {"S": "a"}}),
        lambda: ddb.scan(TableName=name),
        lambda: ddb.query(
            TableName=name, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "a"}}
        ),
    ):
        expect_error(call, "ResourceNotFoundException", "Requested resource not found")


def test_list_tables_contains_created_and_is_sorted(ddb, make_table):
    prefix = unique_name("lt")
    names = [make_table(name=f"{prefix}-{i}") for i in (2, 0, 1)]
    seen, _ = list_all_tables(ddb)
    for n in names:
        assert n in seen
    assert seen == sorted(seen)
    assert len(seen) == len(set(seen))


def list_all_tables(ddb, limit=None):
    """Page through ListTables; returns (names, pages)."""
    names, pages, kwargs = [], [], {}
    if limit:
        kwargs["Limit"] = limit
    for _ in range(1000):
        resp = ddb.list_tables(**kwargs)
        page = resp["TableNames"]
        pages.append(page)
        names.extend(page)
        if "LastEvaluatedTableName" not in resp:
            return names, pages
        assert page and resp["LastEvaluatedTableName"] == page[-1], resp
        kwargs["ExclusiveStartTableName"] = resp["LastEvaluatedTableName"]
    raise AssertionError("ListTables paging did not terminate")


def test_list_tables_paging_with_limit(ddb, make_table):
    prefix = unique_name("lp")
    names = sorted(make_table(name=f"{prefix}-{i}") for i in range(5))
    seen, pages = list_all_tables(ddb, limit=2)
    assert all(len(p) <= 2 for p in pages)
    assert len(pages) >= 3
    assert [n for n in seen if n.startswith(prefix)] == names
    assert seen == sorted(seen)
    assert len(seen) == len(set(seen))


def test_list_tables_exclusive_start_table_name(ddb, make_table):
    prefix = unique_name("l1")
    a = make_table(name=f"{prefix}-a")
    b = make_table(name=f"{prefix}-b")
    make_table(name=f"{prefix}-c")  # so that more tables remain after the page
    resp = ddb.list_tables(Limit=1, ExclusiveStartTableName=a)
    assert resp["TableNames"] == [b]
    assert resp["LastEvaluatedTableName"] == b


def test_list_tables_limit_over_100(ddb):
    expect_error(
        lambda: ddb.list_tables(Limit=101),
        "ValidationException",
        "1 validation error detected: Value '101' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100",
    )


def test_list_tables_limit_zero(ddb_raw):
    expect_error(
        lambda: ddb_raw.list_tables(Limit=0),
        "ValidationException",
        "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
    )


def test_update_table_provisioned_to_on_demand(ddb, make_table):
    name = make_table(billing="PROVISIONED", rcu=5, wcu=5)
    resp = ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")
    assert resp["TableDescription"]["TableName"] == name
    desc = wait_active(ddb, name)
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    assert desc["ProvisionedThroughput"]["WriteCapacityUnits"] == 0


def test_update_table_on_demand_to_provisioned(ddb, table):
    ddb.update_table(
        TableName=table,
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
    )
    desc = wait_active(ddb, table)
    assert desc["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 3
    assert desc["ProvisionedThroughput"]["WriteCapacityUnits"] == 4


@pytest.mark.parametrize(
    "before, after, decreases, stamp",
    [
        pytest.param(5, (10, 20), 0, "LastIncreaseDateTime", id="increase"),
        pytest.param(10, (5, 10), 1, "LastDecreaseDateTime", id="decrease"),
    ],
)
def test_update_table_throughput_change(ddb, make_table, before, after, decreases, stamp):
    away_from_utc_midnight()
    name = make_table(billing="PROVISIONED", rcu=before, wcu=before)
    rcu, wcu = after
    ddb.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": rcu, "WriteCapacityUnits": wcu})
    pt = wait_active(ddb, name)["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == after
    assert pt["NumberOfDecreasesToday"] == decreases
    assert isinstance(pt[stamp], dt.datetime)


def test_a_gsi_counts_its_throughput_decreases_apart_from_its_table(ddb):
    """Four decreases of a GSI a UTC day, then one an hour; the table's
    budget is its own (ack-api-quirks DDB-TABLE-157)."""
    away_from_utc_midnight()
    name = unique_name("gsi-budget")
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
        ],
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 50, "WriteCapacityUnits": 50},
        GlobalSecondaryIndexes=[
            {
                "IndexName": "gsi1",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 50, "WriteCapacityUnits": 50},
            }
        ],
    )
    wait_active(ddb, name)

    def lower_gsi(units):
        return ddb.update_table(
            TableName=name,
            GlobalSecondaryIndexUpdates=[
                {
                    "Update": {
                        "IndexName": "gsi1",
                        "ProvisionedThroughput": {"ReadCapacityUnits": units, "WriteCapacityUnits": units},
                    }
                }
            ],
        )

    for n, units in enumerate([40, 30, 20, 10], start=1):
        lower_gsi(units)
        desc = wait_active(ddb, name)
        gsi = desc["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]
        assert (gsi["NumberOfDecreasesToday"], gsi["ReadCapacityUnits"]) == (n, units)
        assert isinstance(gsi["LastDecreaseDateTime"], dt.datetime)
        assert desc["ProvisionedThroughput"]["NumberOfDecreasesToday"] == 0
    expect_error(
        lambda: lower_gsi(5),
        "LimitExceededException",
        startswith="Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. "
        "After the first 4 decreases, each subsequent decrease in the same UTC day can be performed at most once "
        "every 3600 seconds. Number of decreases today: 4. Last decrease at ",
    )
    assert wait_active(ddb, name)["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 10
    # The table's own budget is untouched.
    ddb.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 40, "WriteCapacityUnits": 40})
    assert wait_active(ddb, name)["ProvisionedThroughput"]["NumberOfDecreasesToday"] == 1


def test_update_table_unchanged_throughput(ddb, make_table):
    name = make_table(billing="PROVISIONED", rcu=5, wcu=5)
    expect_error(
        lambda: ddb.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}),
        "ValidationException",
        "The provisioned throughput for the table will not change. The requested value equals the current value. "
        "Current ReadCapacityUnits provisioned for the table: 5. Requested ReadCapacityUnits: 5. "
        "Current WriteCapacityUnits provisioned for the table: 5. Requested WriteCapacityUnits: 5. "
        "Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
    )


def test_update_missing_table(ddb):
    name = unique_name("missing")
    expect_error(
        lambda: ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST"),
        "ResourceNotFoundException",
        startswith="Requested resource not found",
    )


def test_waiter_table_exists(ddb, make_table):
    name = make_table()
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 5})
