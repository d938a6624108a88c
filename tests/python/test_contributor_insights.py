"""Contributor Insights through boto3: UpdateContributorInsights,
DescribeContributorInsights and ListContributorInsights on a table and its
GSI, their statuses (ENABLING then ENABLED, DISABLING then DISABLED), the
rule names, and ResourceNotFoundException for what does not exist. The
top keys themselves are served in /metrics.json (checked at the end)."""

import json
import time
import urllib.request

import pytest
from botocore.exceptions import ClientError

from conftest import unique_name, wait_active

# dynaburst settles a change after this long (INSIGHTS_TRANSITION_MS).
SETTLE_SECONDS = 2.5


def make(ddb, gsi=True):
    name = unique_name("ci")
    kwargs = dict(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    if gsi:
        kwargs["AttributeDefinitions"].append({"AttributeName": "g", "AttributeType": "S"})
        kwargs["GlobalSecondaryIndexes"] = [
            {"IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}
        ]
    ddb.create_table(**kwargs)
    wait_active(ddb, name)
    return name


def strip(r):
    r = dict(r)
    r.pop("ResponseMetadata", None)
    return r


def test_a_table_starts_disabled(ddb):
    name = make(ddb)
    assert strip(ddb.describe_contributor_insights(TableName=name)) == {
        "TableName": name,
        "ContributorInsightsStatus": "DISABLED",
    }


def test_enable_then_disable_moves_through_the_statuses(ddb):
    name = make(ddb)
    r = strip(ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="ENABLE"))
    assert r == {
        "TableName": name,
        "ContributorInsightsStatus": "ENABLING",
        "ContributorInsightsMode": "ACCESSED_AND_THROTTLED_KEYS",
    }
    time.sleep(SETTLE_SECONDS)
    d = ddb.describe_contributor_insights(TableName=name)
    assert d["ContributorInsightsStatus"] == "ENABLED"
    assert d["ContributorInsightsMode"] == "ACCESSED_AND_THROTTLED_KEYS"
    rules = d["ContributorInsightsRuleList"]
    assert [r.split("-")[1] for r in rules] == ["PKC", "PKT", "SKC", "SKT"]
    assert all(r.startswith(f"DynamoDBContributorInsights-") and f"-{name}-" in r for r in rules)
    assert d["LastUpdateDateTime"].year >= 2024

    r = strip(ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="DISABLE"))
    assert r["ContributorInsightsStatus"] == "DISABLING"
    time.sleep(SETTLE_SECONDS)
    d = ddb.describe_contributor_insights(TableName=name)
    assert d["ContributorInsightsStatus"] == "DISABLED"
    assert "ContributorInsightsRuleList" not in d


def test_throttled_keys_mode_has_only_the_throttled_rules(ddb):
    name = make(ddb)
    r = ddb.update_contributor_insights(
        TableName=name, ContributorInsightsAction="ENABLE", ContributorInsightsMode="THROTTLED_KEYS"
    )
    assert r["ContributorInsightsMode"] == "THROTTLED_KEYS"
    d = ddb.describe_contributor_insights(TableName=name)
    assert [r.split("-")[1] for r in d["ContributorInsightsRuleList"]] == ["PKT", "SKT"]


def test_a_gsi_has_its_own_setting_and_list_shows_table_and_index(ddb):
    name = make(ddb)
    r = strip(ddb.update_contributor_insights(TableName=name, IndexName="byg", ContributorInsightsAction="ENABLE"))
    assert r["IndexName"] == "byg" and r["ContributorInsightsStatus"] == "ENABLING"
    assert ddb.describe_contributor_insights(TableName=name)["ContributorInsightsStatus"] == "DISABLED"
    listed = ddb.list_contributor_insights(TableName=name)["ContributorInsightsSummaries"]
    # DISABLED resources are not listed (ack-api-quirks DDB-TABLE-095).
    assert listed == [
        {
            "TableName": name,
            "IndexName": "byg",
            "ContributorInsightsStatus": "ENABLING",
            "ContributorInsightsMode": "ACCESSED_AND_THROTTLED_KEYS",
        },
    ]
    # Without a table: every resource with Contributor Insights on.
    everything = ddb.list_contributor_insights()["ContributorInsightsSummaries"]
    assert {"TableName": name, "IndexName": "byg"}.items() <= next(
        s for s in everything if s["TableName"] == name
    ).items()
    ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="ENABLE")
    page = ddb.list_contributor_insights(TableName=name, MaxResults=1)
    assert len(page["ContributorInsightsSummaries"]) == 1 and page["NextToken"]
    rest = ddb.list_contributor_insights(TableName=name, MaxResults=1, NextToken=page["NextToken"])
    assert rest["ContributorInsightsSummaries"][0]["IndexName"] == "byg" and "NextToken" not in rest


def test_missing_table_or_index_is_resource_not_found(ddb):
    """Naming what is missing (ack-api-quirks DDB-TABLE-094, -097)."""
    name = make(ddb, gsi=False)
    missing = "no-such-" + name
    for call, message in (
        (lambda: ddb.describe_contributor_insights(TableName=missing), f"Requested resource not found: Table: {missing} not found"),
        (
            lambda: ddb.update_contributor_insights(TableName=missing, ContributorInsightsAction="ENABLE"),
            f"Requested resource not found: Table: {missing} not found",
        ),
        (lambda: ddb.list_contributor_insights(TableName=missing), f"Requested resource not found: Table: {missing} not found"),
        (
            lambda: ddb.describe_contributor_insights(TableName=name, IndexName="nope"),
            f"Requested resource not found: Index: nope not found for table: {name}",
        ),
    ):
        with pytest.raises(ClientError) as e:
            call()
        assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"
        assert e.value.response["Error"]["Message"] == message


def test_asking_for_what_is_already_so_changes_nothing(ddb):
    """DDB-TABLE-089, -091, -341."""
    name = make(ddb, gsi=False)
    # DISABLE of a resource never enabled: DISABLED, no mode, no time.
    r = strip(ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="DISABLE"))
    assert r == {"TableName": name, "ContributorInsightsStatus": "DISABLED"}
    assert "LastUpdateDateTime" not in ddb.describe_contributor_insights(TableName=name)
    ddb.update_contributor_insights(
        TableName=name, ContributorInsightsAction="ENABLE", ContributorInsightsMode="THROTTLED_KEYS"
    )
    first = ddb.describe_contributor_insights(TableName=name)["LastUpdateDateTime"]
    again = ddb.update_contributor_insights(
        TableName=name, ContributorInsightsAction="ENABLE", ContributorInsightsMode="THROTTLED_KEYS"
    )
    assert ddb.describe_contributor_insights(TableName=name)["LastUpdateDateTime"] == first
    assert again["ContributorInsightsMode"] == "THROTTLED_KEYS"
    # ENABLE without a mode means the default mode again.
    back = ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="ENABLE")
    assert back["ContributorInsightsMode"] == "ACCESSED_AND_THROTTLED_KEYS"


def test_invalid_action_is_a_validation_error(ddb):
    name = make(ddb, gsi=False)
    with pytest.raises(ClientError) as e:
        ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="TOGGLE")
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert "contributorInsightsAction" in e.value.response["Error"]["Message"]


def test_top_keys_are_in_metrics_json(ddb, endpoint):
    name = make(ddb, gsi=False)
    for i in range(30):
        ddb.put_item(TableName=name, Item={"pk": {"S": "hot"}, "sk": {"S": f"s{i % 3}"}, "g": {"S": "x"}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "cold"}, "sk": {"S": "a"}, "g": {"S": "x"}})
    ddb.get_item(TableName=name, Key={"pk": {"S": "cold"}, "sk": {"S": "a"}})
    with urllib.request.urlopen(endpoint + "/metrics.json") as r:
        doc = json.load(r)
    t = next(t for t in doc["tables"] if t["table"] == name and "index" not in t)
    top = t["top_keys"]
    # 30 writes of one unit, weighted 3 x WCU.
    assert top["accessed_partition_keys"][0] == {"partition_key": "hot", "count": 90.0}
    # 1 write (3) and one eventually consistent read of a small item (0.5).
    assert top["accessed_partition_keys"][1] == {"partition_key": "cold", "count": 3.5}
    assert {"partition_key": "hot", "sort_key": "s0", "count": 30.0} in top["accessed_keys"]
    assert top["throttled_partition_keys"] == []
    assert t["item_count"] == 4
