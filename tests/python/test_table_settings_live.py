"""CreateTable and UpdateTable rules as today's DynamoDB applies them,
through boto3 with its own checks off. The expected texts and responses are
those ack-api-quirks recorded from the live service in October 2026
(`services/dynamodb`: the message catalogue DDB-TABLE-442 and the findings
named in each test)."""

from __future__ import annotations

import pytest

from conftest import expect_error, unique_name

IV = "One or more parameter values were invalid: "
KEY = dict(
    AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
)


@pytest.fixture
def table_of(ddb_raw):
    made = []

    def make(**kw):
        name = unique_name()
        args = {**KEY, **kw}
        if "ProvisionedThroughput" not in args and "BillingMode" not in args:
            args["BillingMode"] = "PAY_PER_REQUEST"
        ddb_raw.create_table(TableName=name, **args)
        made.append(name)
        return name

    yield make
    for name in made:
        try:
            ddb_raw.update_table(TableName=name, DeletionProtectionEnabled=False)
        except Exception:
            pass
        ddb_raw.delete_table(TableName=name)


def describe(ddb, name):
    return ddb.describe_table(TableName=name)["Table"]


def test_billing_mode_summary_and_warm_throughput_follow_the_billing_history(ddb_raw, table_of):
    """DDB-TABLE-025/-055/-183 and -028/-032/-061/-068."""
    prov = table_of(ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    t = describe(ddb_raw, prov)
    assert "BillingModeSummary" not in t, "never PAY_PER_REQUEST: no summary"
    assert t["WarmThroughput"] == {"ReadUnitsPerSecond": 1, "WriteUnitsPerSecond": 1, "Status": "ACTIVE"}
    # The warm throughput keeps the most units the table ever had.
    ddb_raw.update_table(TableName=prov, ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 3})
    ddb_raw.update_table(TableName=prov, ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 2})
    assert describe(ddb_raw, prov)["WarmThroughput"]["ReadUnitsPerSecond"] == 3
    # Switched to on demand: the summary appears, with the switch's time,
    # and stays after a switch back.
    out = ddb_raw.update_table(
        TableName=prov, BillingMode="PAY_PER_REQUEST", OnDemandThroughput={"MaxReadRequestUnits": 100}
    )
    # The switch's time shows in DescribeTable, not in the answer (DDB-TABLE-060).
    assert out["TableDescription"]["BillingModeSummary"] == {"BillingMode": "PAY_PER_REQUEST"}
    t = describe(ddb_raw, prov)
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    switched = t["BillingModeSummary"]["LastUpdateToPayPerRequestDateTime"]
    assert t["OnDemandThroughput"] == {"MaxReadRequestUnits": 100}, "sent with the switch, applied with it"
    assert t["WarmThroughput"] == {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
    ddb_raw.update_table(
        TableName=prov, BillingMode="PROVISIONED", ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}
    )
    t = describe(ddb_raw, prov)
    assert t["BillingModeSummary"] == {"BillingMode": "PROVISIONED", "LastUpdateToPayPerRequestDateTime": switched}

    ppr = table_of()
    t = describe(ddb_raw, ppr)
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert t["WarmThroughput"] == {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
    assert "OnDemandThroughput" not in t


def test_on_demand_throughput_rules(ddb_raw, table_of):
    """DDB-TABLE-038/-039/-051/-059/-178/-182."""
    expect_error(
        lambda: ddb_raw.create_table(
            TableName=unique_name(),
            ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
            OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 100},
            **KEY,
        ),
        "ValidationException",
        IV + "MaxReadRequestUnits for OnDemandThroughput cannot be specified when table BillingMode is PROVISIONED.",
    )
    for bad in ({"MaxReadRequestUnits": 0}, {"MaxReadRequestUnits": -1}):
        expect_error(
            lambda: ddb_raw.create_table(
                TableName=unique_name(), BillingMode="PAY_PER_REQUEST", OnDemandThroughput=bad, **KEY
            ),
            "ValidationException",
            IV + "Requested MaxReadRequestUnits for OnDemandThroughput for table is outside of valid range",
        )
    prov = table_of(ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    expect_error(
        lambda: ddb_raw.update_table(TableName=prov, OnDemandThroughput={"MaxWriteRequestUnits": 5}),
        "ValidationException",
        IV + "MaxWriteRequestUnits for OnDemandThroughput cannot be specified when the table BillingMode is PROVISIONED",
    )
    ppr = table_of(OnDemandThroughput={"MaxReadRequestUnits": 300})
    assert describe(ddb_raw, ppr)["OnDemandThroughput"] == {"MaxReadRequestUnits": 300}
    out = ddb_raw.update_table(TableName=ppr, OnDemandThroughput={"MaxReadRequestUnits": 1000, "MaxWriteRequestUnits": 500})
    # Applied at once: the answer is ACTIVE and shows the new maxima.
    assert out["TableDescription"]["TableStatus"] == "ACTIVE"
    assert out["TableDescription"]["OnDemandThroughput"] == {"MaxReadRequestUnits": 1000, "MaxWriteRequestUnits": 500}
    ddb_raw.update_table(TableName=ppr, OnDemandThroughput={"MaxWriteRequestUnits": -1})
    assert describe(ddb_raw, ppr)["OnDemandThroughput"] == {"MaxReadRequestUnits": 1000}
    ddb_raw.update_table(TableName=ppr, OnDemandThroughput={"MaxReadRequestUnits": -1})
    assert "OnDemandThroughput" not in describe(ddb_raw, ppr)
    expect_error(
        lambda: ddb_raw.update_table(TableName=ppr, OnDemandThroughput={"MaxReadRequestUnits": -2}),
        "ValidationException",
        IV + "Requested MaxReadRequestUnits for OnDemandThroughput for table is outside of valid range",
    )


def test_warm_throughput_at_create_is_at_least_what_the_table_starts_with(ddb_raw, table_of):
    """DDB-TABLE-039."""
    expect_error(
        lambda: ddb_raw.create_table(
            TableName=unique_name(), BillingMode="PAY_PER_REQUEST", WarmThroughput={"ReadUnitsPerSecond": 1}, **KEY
        ),
        "ValidationException",
        IV
        + "Requested ReadUnitsPerSecond for WarmThroughput for table is lower than initial throughput for OnDemand. "
        "See: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html"
        "#on-demand-capacity-mode-initial",
    )
    expect_error(
        lambda: ddb_raw.create_table(
            TableName=unique_name(),
            ProvisionedThroughput={"ReadCapacityUnits": 10, "WriteCapacityUnits": 10},
            WarmThroughput={"ReadUnitsPerSecond": 5, "WriteUnitsPerSecond": 5},
            **KEY,
        ),
        "ValidationException",
        IV + "Requested ReadUnitsPerSecond for WarmThroughput for table is lower than ReadCapacityUnits of ProvisionedThroughput",
    )
    # A member not sent starts where the table would.
    name = table_of(WarmThroughput={"ReadUnitsPerSecond": 12001})
    assert describe(ddb_raw, name)["WarmThroughput"] == {
        "ReadUnitsPerSecond": 12001,
        "WriteUnitsPerSecond": 4000,
        "Status": "ACTIVE",
    }
    # Lowering below what is shown is refused, also on a fresh table.
    fresh = table_of()
    expect_error(
        lambda: ddb_raw.update_table(TableName=fresh, WarmThroughput={"ReadUnitsPerSecond": 1}),
        "ValidationException",
        IV
        + "Requested ReadUnitsPerSecond for WarmThroughput for table is lower than current WarmThroughput, "
        "decreasing WarmThroughput is not supported",
    )


def test_update_table_members_that_cannot_go_together(ddb_raw, table_of):
    """DDB-TABLE-174, -382, -433."""
    prov = table_of(ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    stream = {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
    cases = [
        (
            dict(ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}, StreamSpecification=stream),
            IV + "You cannot modify stream status while updating table IOPS",
        ),
        (
            dict(WarmThroughput={"ReadUnitsPerSecond": 20000}, ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}),
            IV + "WarmThroughput must be the only operation in the request",
        ),
        (
            dict(OnDemandThroughput={"MaxReadRequestUnits": 5}, StreamSpecification=stream),
            IV + "OnDemandThroughput can only be combined with BillingMode in an UpdateTable request",
        ),
        (
            dict(
                StreamSpecification=stream,
                AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                GlobalSecondaryIndexUpdates=[
                    {
                        "Create": {
                            "IndexName": "by-g",
                            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                            "Projection": {"ProjectionType": "ALL"},
                            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
                        }
                    }
                ],
            ),
            IV + "You cannot create or delete index while changing stream status",
        ),
    ]
    for members, message in cases:
        expect_error(lambda: ddb_raw.update_table(TableName=prov, **members), "ValidationException", message)
    t = describe(ddb_raw, prov)
    assert "StreamSpecification" not in t and "GlobalSecondaryIndexes" not in t, "nothing was applied"
    # Sending the units it has again, with or without BillingMode, changes nothing.
    for extra in ({}, {"BillingMode": "PROVISIONED"}):
        expect_error(
            lambda: ddb_raw.update_table(
                TableName=prov, ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}, **extra
            ),
            "ValidationException",
            startswith="The provisioned throughput for the table will not change. The requested value equals the current value.",
        )
    expect_error(
        lambda: ddb_raw.update_table(
            TableName=prov, BillingMode="PAY_PER_REQUEST", ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}
        ),
        "ValidationException",
        IV + "ProvisionedThroughput cannot be specified when BillingMode is PAY_PER_REQUEST",
    )
    expect_error(
        lambda: ddb_raw.update_table(TableName=prov, ProvisionedThroughput={"ReadCapacityUnits": 40001, "WriteCapacityUnits": 1}),
        "LimitExceededException",
        "The requested ReadCapacityUnits, 40001, is above the per table maximum for the account in us-east-1. "
        "Per table maximum: 40000. Refer to the Amazon DynamoDB Developer Guide for current limits and how to "
        "request higher limits.",
    )


def test_stream_encryption_and_class_resends(ddb_raw, table_of):
    """DDB-TABLE-035/-036/-044/-078/-082/-141/-177."""
    expect_error(
        lambda: ddb_raw.create_table(
            TableName=unique_name(), BillingMode="PAY_PER_REQUEST", StreamSpecification={"StreamEnabled": True}, **KEY
        ),
        "ValidationException",
        IV + "Table is being created with a stream enabled, UpdateViewType is required",
    )
    name = table_of(SSESpecification={"SSEType": "KMS"})
    sse = describe(ddb_raw, name)["SSEDescription"]
    assert (sse["Status"], sse["SSEType"]) == ("ENABLED", "KMS"), "SSEType KMS alone asks for KMS"
    expect_error(
        lambda: ddb_raw.update_table(TableName=name, StreamSpecification={"StreamEnabled": True}),
        "ValidationException",
        IV + "If stream is being enabled then UpdateViewType is required",
    )
    # Re-encrypting with the same key named any way but its own ARN passes;
    # the ARN itself is refused as no change.
    out = ddb_raw.update_table(TableName=name, SSESpecification={"Enabled": True})
    assert out["TableDescription"]["TableStatus"] == "ACTIVE"
    assert describe(ddb_raw, name)["SSEDescription"]["KMSMasterKeyArn"] == sse["KMSMasterKeyArn"]
    expect_error(
        lambda: ddb_raw.update_table(
            TableName=name, SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": sse["KMSMasterKeyArn"]}
        ),
        "ValidationException",
        IV + "Table is already encrypted with given KMSMasterKeyId. Use KMSMasterKeyId parameter if you want to change Master Key",
    )
    # Naming the class a table already has changes nothing.
    ddb_raw.update_table(TableName=name, TableClass="STANDARD")
    assert "TableClassSummary" not in describe(ddb_raw, name)
    out = ddb_raw.update_table(TableName=name, DeletionProtectionEnabled=True)
    assert out["TableDescription"]["TableStatus"] == "ACTIVE"


def test_key_schema_and_attribute_definition_texts(ddb_raw):
    """DDB-TABLE-042, -123, -124, -126, -127."""
    name = unique_name()

    def create(**kw):
        return lambda: ddb_raw.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", **kw)

    expect_error(
        create(
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "x", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "HASH"}],
        ),
        "ValidationException",
        "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
    )
    expect_error(
        create(AttributeDefinitions=[], KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}]),
        "ValidationException",
        "Invalid KeySchema: Some index key attribute have no definition",
    )
    gsi = {
        "IndexName": "by-a",
        "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"},
    }
    defs = [{"AttributeName": n, "AttributeType": "S"} for n in ("sk", "a", "b", "pk", "c")]
    table_key = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
    # Printed as a Java HashSet prints them.
    expect_error(
        create(AttributeDefinitions=defs, KeySchema=table_key, GlobalSecondaryIndexes=[gsi]),
        "ValidationException",
        IV + "Some AttributeDefinitions are not used. AttributeDefinitions: [sk, a, b, pk, c], keys used: [a, sk, pk]",
    )
    expect_error(
        create(AttributeDefinitions=defs[:1] + defs[3:4] + [defs[4]], KeySchema=table_key),
        "ValidationException",
        IV + "Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions",
    )
    expect_error(
        create(
            AttributeDefinitions=defs[:2] + defs[3:4],
            KeySchema=table_key,
            GlobalSecondaryIndexes=[{**gsi, "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "x"]}}],
        ),
        "ValidationException",
        IV + "Duplicate element in NonKeyAttributes: x",
    )
    for keys, message in (
        ([("a", "HASH"), ("b", "RANGE"), ("c", "HASH")], IV + "All HASH key attributes must precede RANGE key attributes in the KeySchema"),
        ([("b", "RANGE"), ("a", "HASH")], "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"),
        ([(f"h{i}", "HASH") for i in range(5)], IV + "The KeySchema exceeds the maximum allowed number of HASH key attributes"),
    ):
        names = sorted({n for n, _ in keys})
        expect_error(
            create(
                AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ["pk", *names]],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                GlobalSecondaryIndexes=[{**gsi, "KeySchema": [{"AttributeName": n, "KeyType": k} for n, k in keys]}],
            ),
            "ValidationException",
            message,
        )


def test_index_updates_are_checked_whole_before_any_is_applied(ddb_raw, table_of):
    """DDB-TABLE-125/-151/-160/-164/-380."""
    defs = [{"AttributeName": n, "AttributeType": "S"} for n in ("z", "pk", "a")]
    gsi = lambda name, key: {  # noqa: E731
        "IndexName": name,
        "KeySchema": [{"AttributeName": key, "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["zz", "aa", "mm"]},
        "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 3},
    }
    name = table_of(
        AttributeDefinitions=defs,
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        GlobalSecondaryIndexes=[gsi("by-z", "z"), gsi("by-a", "a")],
    )
    t = describe(ddb_raw, name)
    # Definitions and projected names come back sorted.
    assert [d["AttributeName"] for d in t["AttributeDefinitions"]] == ["a", "pk", "z"]
    assert t["GlobalSecondaryIndexes"][0]["Projection"]["NonKeyAttributes"] == ["aa", "mm", "zz"]
    update = {"Update": {"IndexName": "by-z", "ProvisionedThroughput": {"ReadCapacityUnits": 7, "WriteCapacityUnits": 7}}}
    expect_error(
        lambda: ddb_raw.update_table(
            TableName=name,
            GlobalSecondaryIndexUpdates=[update, {"Update": {"IndexName": "ghost", "ProvisionedThroughput": {"ReadCapacityUnits": 7, "WriteCapacityUnits": 7}}}],
        ),
        "ResourceNotFoundException",
        f"Requested resource not found: Index ghost for table {name}",
    )
    by_z = next(i for i in describe(ddb_raw, name)["GlobalSecondaryIndexes"] if i["IndexName"] == "by-z")
    assert by_z["ProvisionedThroughput"]["ReadCapacityUnits"] == 3, "the first entry was not applied"
    expect_error(
        lambda: ddb_raw.update_table(
            TableName=name,
            GlobalSecondaryIndexUpdates=[{"Update": {"IndexName": "by-z", "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 3}}}],
        ),
        "ValidationException",
        "The provisioned throughput for the index by-z will not change. The requested value equals the current value. "
        "Current ReadCapacityUnits provisioned for index by-z: 3. Requested ReadCapacityUnits: 3. Current "
        "WriteCapacityUnits provisioned for index by-z: 3. Requested WriteCapacityUnits: 3. Refer to the Amazon "
        "DynamoDB Developer Guide for current limits and how to request higher limits.",
    )
    expect_error(
        lambda: ddb_raw.update_table(
            TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by-a"}, "Update": update["Update"]}]
        ),
        "ValidationException",
        IV + "Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate object",
    )
    # A GSI Update only: applied at once, the table stays ACTIVE.
    out = ddb_raw.update_table(TableName=name, GlobalSecondaryIndexUpdates=[update])
    assert out["TableDescription"]["TableStatus"] == "ACTIVE"
    # Deleting an index drops the definitions only it used.
    ddb_raw.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by-a"}}])
    assert [d["AttributeName"] for d in describe(ddb_raw, name)["AttributeDefinitions"]] == ["pk", "z"]


def test_degenerate_inputs_get_dynamodbs_own_texts(ddb_raw, table_of):
    """DDB-TABLE-013, -035, -457."""
    name = table_of()
    table = describe(ddb_raw, name)
    # TableId: a version 4 UUID.
    assert table["TableId"][14] == "4" and table["TableId"][19] in "89ab"
    expect_error(
        lambda: ddb_raw.update_table(
            TableName=name, SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": ""}
        ),
        "ValidationException",
        "1 validation error detected: Value '' at 'sSESpecification.kMSMasterKeyId' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1",
    )
    for call in (ddb_raw.describe_backup, ddb_raw.delete_backup):
        expect_error(lambda: call(BackupArn=""), "ValidationException", "Invalid Backup ARN")
    expect_error(
        lambda: ddb_raw.describe_contributor_insights(TableName=name, IndexName=""),
        "ValidationException",
        "IndexName must be at least 3 characters long and at most 255 characters long",
    )
    expect_error(
        lambda: ddb_raw.update_table(TableName=name, StreamSpecification={"StreamEnabled": True, "StreamViewType": ""}),
        "ValidationException",
        "1 validation error detected: Value '' at 'streamSpecification.streamViewType' failed to satisfy constraint: "
        "Member must satisfy enum value set: [OLD_IMAGE, KEYS_ONLY, NEW_AND_OLD_IMAGES, NEW_IMAGE]",
    )
    expect_error(
        lambda: ddb_raw.update_contributor_insights(
            TableName=name, ContributorInsightsAction="ENABLE", ContributorInsightsMode=""
        ),
        "ValidationException",
        "1 validation error detected: Value '' at 'contributorInsightsMode' failed to satisfy constraint: "
        "Member must satisfy enum value set: [THROTTLED_KEYS, ACCESSED_AND_THROTTLED_KEYS]",
    )


def test_violations_of_one_structure_in_dynamodbs_order(ddb_raw, table_of):
    """DDB-TABLE-038 and -457: the order DynamoDB lists them in."""
    expect_error(
        lambda: ddb_raw.create_table(
            TableName=unique_name(), ProvisionedThroughput={"ReadCapacityUnits": 0, "WriteCapacityUnits": 0}, **KEY
        ),
        "ValidationException",
        "2 validation errors detected: Value '0' at 'provisionedThroughput.writeCapacityUnits' failed to satisfy "
        "constraint: Member must have value greater than or equal to 1; Value '0' at "
        "'provisionedThroughput.readCapacityUnits' failed to satisfy constraint: Member must have value greater "
        "than or equal to 1",
    )
    name = table_of()
    expect_error(
        lambda: ddb_raw.update_time_to_live(TableName=name, TimeToLiveSpecification={}),
        "ValidationException",
        "2 validation errors detected: Value null at 'timeToLiveSpecification.attributeName' failed to satisfy "
        "constraint: Member must not be null; Value null at 'timeToLiveSpecification.enabled' failed to satisfy "
        "constraint: Member must not be null",
    )


def test_a_refused_stream_change_leaves_the_index_updates_of_its_request_unapplied(ddb_raw, table_of):
    """Nothing changes unless every check passes (a review found the GSI
    update applied before the stream's no-op refusal)."""
    name = table_of(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
            }
        ],
    )
    expect_error(
        lambda: ddb_raw.update_table(
            TableName=name,
            StreamSpecification={"StreamEnabled": False},
            GlobalSecondaryIndexUpdates=[
                {"Update": {"IndexName": "by-g", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}}
            ],
        ),
        "ValidationException",
        f"Table has no stream to disable: TableName: {name}",
    )
    [gsi] = describe(ddb_raw, name)["GlobalSecondaryIndexes"]
    assert gsi["ProvisionedThroughput"]["ReadCapacityUnits"] == 1


def gsi_spec(name="gsi1", **extra):
    return {
        "IndexName": name,
        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"},
        **extra,
    }


GSI_DEFS = [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}]
GSI_KEY = dict(AttributeDefinitions=GSI_DEFS, KeySchema=KEY["KeySchema"])


def gsi_of(ddb, name, index="gsi1"):
    return next(g for g in describe(ddb, name)["GlobalSecondaryIndexes"] if g["IndexName"] == index)


def test_gsi_on_demand_and_warm_throughput_at_create(ddb_raw, table_of):
    """A GSI's own OnDemandThroughput and WarmThroughput: kept and shown
    (they were dropped before), with the table's rules and the index's
    texts (DDB-TABLE-128, -134, -135, -138, -456)."""
    ppr = table_of(
        **GSI_KEY,
        GlobalSecondaryIndexes=[
            gsi_spec(
                OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50},
                WarmThroughput={"ReadUnitsPerSecond": 13000, "WriteUnitsPerSecond": 5000},
            ),
            gsi_spec("gsi2", OnDemandThroughput={}, WarmThroughput={}),
        ],
    )
    assert "OnDemandThroughput" not in describe(ddb_raw, ppr)
    one = gsi_of(ddb_raw, ppr)
    assert one["OnDemandThroughput"] == {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}
    assert one["WarmThroughput"] == {"ReadUnitsPerSecond": 13000, "WriteUnitsPerSecond": 5000, "Status": "ACTIVE"}
    # Empty structures set nothing: no maxima, the on-demand initial warm throughput.
    two = gsi_of(ddb_raw, ppr, "gsi2")
    assert "OnDemandThroughput" not in two
    assert two["WarmThroughput"] == {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}

    def create(billing, index):
        return lambda: ddb_raw.create_table(TableName=unique_name(), **GSI_KEY, **billing, GlobalSecondaryIndexes=[index])

    ppr_billing = {"BillingMode": "PAY_PER_REQUEST"}
    for bad in ({"MaxReadRequestUnits": 0}, {"MaxReadRequestUnits": -1}):
        expect_error(
            create(ppr_billing, gsi_spec(OnDemandThroughput=bad)),
            "ValidationException",
            IV + "Requested MaxReadRequestUnits for OnDemandThroughput for index : gsi1 is outside of valid range",
        )
    expect_error(
        create(ppr_billing, gsi_spec(WarmThroughput={"ReadUnitsPerSecond": 100})),
        "ValidationException",
        IV
        + "Requested ReadUnitsPerSecond for WarmThroughput for index gsi1 is lower than initial throughput for OnDemand. "
        "See: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html"
        "#on-demand-capacity-mode-initial",
    )
    units = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    provisioned = {"ProvisionedThroughput": units}
    expect_error(
        create(provisioned, gsi_spec(ProvisionedThroughput=units, OnDemandThroughput={"MaxWriteRequestUnits": 10})),
        "ValidationException",
        IV + "MaxWriteRequestUnits for OnDemandThroughput for index: gsi1 cannot be specified when table BillingMode is PROVISIONED.",
    )
    # A provisioned GSI's warm throughput is at least its units.
    prov = table_of(**GSI_KEY, **provisioned, GlobalSecondaryIndexes=[gsi_spec(ProvisionedThroughput=units)])
    assert gsi_of(ddb_raw, prov)["WarmThroughput"] == {"ReadUnitsPerSecond": 5, "WriteUnitsPerSecond": 5, "Status": "ACTIVE"}


def test_gsi_on_demand_and_warm_throughput_updates(ddb_raw, table_of):
    """GlobalSecondaryIndexUpdates Update with OnDemandThroughput and
    WarmThroughput (DDB-TABLE-134, -135, -152, -153, -154, -155, -456)."""
    name = table_of(**GSI_KEY, GlobalSecondaryIndexes=[gsi_spec(OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50})])

    def update(table=name, **action):
        return ddb_raw.update_table(TableName=table, GlobalSecondaryIndexUpdates=[{"Update": {"IndexName": "gsi1", **action}}])

    # Members merge one by one; sending the same maxima again is no error.
    update(OnDemandThroughput={"MaxReadRequestUnits": 6000})
    assert gsi_of(ddb_raw, name)["OnDemandThroughput"] == {"MaxReadRequestUnits": 6000, "MaxWriteRequestUnits": 50}
    update(OnDemandThroughput={"MaxReadRequestUnits": 6000})
    update(OnDemandThroughput={"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": -1})
    assert "OnDemandThroughput" not in gsi_of(ddb_raw, name)
    expect_error(
        lambda: update(OnDemandThroughput={"MaxWriteRequestUnits": 0}),
        "ValidationException",
        IV + "Requested MaxWriteRequestUnits for OnDemandThroughput for index : gsi1 is outside of valid range",
    )
    # Warm throughput only rises.
    update(WarmThroughput={"ReadUnitsPerSecond": 12002})
    assert gsi_of(ddb_raw, name)["WarmThroughput"] == {"ReadUnitsPerSecond": 12002, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
    update(WarmThroughput={"ReadUnitsPerSecond": 12002, "WriteUnitsPerSecond": 4000})
    expect_error(
        lambda: update(WarmThroughput={"WriteUnitsPerSecond": 100}),
        "ValidationException",
        IV
        + "Requested WriteUnitsPerSecond for WarmThroughput for index gsi1 is lower than current WarmThroughput, "
        "decreasing WarmThroughput is not supported",
    )
    # An empty WarmThroughput is refused before the table is looked up.
    for table in (name, "no-such-table-" + unique_name()):
        expect_error(
            lambda: update(table=table, WarmThroughput={}),
            "ValidationException",
            IV + "WarmThroughput must have at least one of ReadUnitsPerSecond or WriteUnitsPerSecond specified for index: gsi1",
        )
    # On demand, nothing else may change, and an Update must change something.
    only = IV + "The only Updates for index: gsi1 when TableThroughputMode is PAY_PER_REQUEST can be to OnDemandThroughput, WarmThroughput"
    expect_error(lambda: update(ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}), "ValidationException", only)
    expect_error(lambda: update(), "ValidationException", only)
    expect_error(lambda: update(OnDemandThroughput={}), "ValidationException", only)
    # A provisioned table's GSIs take no maxima.
    units = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    prov = table_of(**GSI_KEY, ProvisionedThroughput=units, GlobalSecondaryIndexes=[gsi_spec(ProvisionedThroughput=units)])
    expect_error(
        lambda: update(table=prov, OnDemandThroughput={"MaxReadRequestUnits": 10}),
        "ValidationException",
        IV + "MaxReadRequestUnits for OnDemandThroughput for index : gsi1 cannot be specified when the table BillingMode is PROVISIONED",
    )
    # Lowering a provisioned GSI's units keeps its warm throughput at the most it had.
    update(table=prov, ProvisionedThroughput={"ReadCapacityUnits": 9, "WriteCapacityUnits": 7})
    update(table=prov, ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    assert gsi_of(ddb_raw, prov)["WarmThroughput"] == {"ReadUnitsPerSecond": 9, "WriteUnitsPerSecond": 7, "Status": "ACTIVE"}
