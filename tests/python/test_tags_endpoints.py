"""Tags (TagResource, UntagResource, ListTagsOfResource, CreateTable Tags),
DescribeEndpoints, time to live, CORS and table ARNs as TableName, through boto3.
Facts and messages: docs/reference/dynamodb-api-surface.md, section 7."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from conftest import expect_error, raw_post, unique_name


def arn_of(ddb, table):
    return ddb.describe_table(TableName=table)["Table"]["TableArn"]


def all_tags(ddb, arn):
    tags, token = [], None
    while True:
        kw = {"NextToken": token} if token else {}
        page = ddb.list_tags_of_resource(ResourceArn=arn, **kw)
        tags += page["Tags"]
        token = page.get("NextToken")
        if not token:
            return tags


def test_tags_are_set_overwritten_listed_in_pages_and_removed(ddb, make_table):
    table = make_table(Tags=[{"Key": "team", "Value": "data"}])
    arn = arn_of(ddb, table)
    assert all_tags(ddb, arn) == [{"Key": "team", "Value": "data"}]
    ddb.tag_resource(
        ResourceArn=arn,
        Tags=[{"Key": "team", "Value": "platform"}, {"Key": "cost center", "Value": ""}]
        + [{"Key": f"k{i:02d}", "Value": f"v{i}"} for i in range(20)],
    )
    tags = all_tags(ddb, arn)
    assert len(tags) == 22
    assert tags[:2] == [{"Key": "team", "Value": "platform"}, {"Key": "cost center", "Value": ""}]
    # All in one page, as DynamoDB answers (a table has at most 50 tags).
    first = ddb.list_tags_of_resource(ResourceArn=arn)
    assert first["Tags"] == tags
    assert "NextToken" not in first
    ddb.untag_resource(ResourceArn=arn, TagKeys=["team"] + [f"k{i:02d}" for i in range(20)])
    assert all_tags(ddb, arn) == [{"Key": "cost center", "Value": ""}]


def test_tag_errors(ddb, ddb_raw, make_table):
    """Texts as DynamoDB answers them today (ack-api-quirks DDB-TABLE-071,
    -107, -372, live 2026-10): every tag is checked by the operation itself,
    the whole request is refused at the first bad one, and nothing is set."""
    table = make_table(Tags=[{"Key": "keep", "Value": "1"}])
    arn = arn_of(ddb, table)

    def refused(call, code, message):
        expect_error(call, code, message)
        assert all_tags(ddb, arn) == [{"Key": "keep", "Value": "1"}], "a refused request changes nothing"

    def tag(*tags):
        return lambda: ddb_raw.tag_resource(ResourceArn=arn, Tags=list(tags))

    refused(tag(), "ValidationException", "Atleast one Tag needs to be provided as Input.")
    refused(
        lambda: ddb_raw.untag_resource(ResourceArn=arn, TagKeys=[]),
        "ValidationException",
        "Atleast one Tag Key needs to be provided as Input.",
    )
    long_key = "k" * 129
    refused(
        tag({"Key": "good", "Value": "v"}, {"Key": long_key, "Value": "v"}),
        "ValidationException",
        f"The Tag Key provided is invalid, Key: {long_key}",
    )
    refused(tag({"Key": "", "Value": "v"}), "ValidationException", "The Tag Key provided is invalid, Key: ")
    refused(tag({"Value": "v"}), "ValidationException", "The Tag Key provided is invalid, Key: null")
    refused(tag({"Key": "a"}), "ValidationException", "The Tag Value provided is invalid, Value: null")
    refused(
        tag({"Key": "a", "Value": "v" * 257}),
        "ValidationException",
        f"The Tag Value provided is invalid, Value: {'v' * 257}",
    )
    refused(tag({"Key": "a", "Value": "a,b"}), "ValidationException", "The Tag Value provided is invalid, Value: a,b")
    refused(
        tag({"Key": "good", "Value": "v"}, {"Key": "aws:zzz", "Value": "v"}),
        "ValidationException",
        "Tag Key cannot be prefixed with aws:, Key: aws:zzz",
    )
    refused(
        tag({"Key": "dup", "Value": "1"}, {"Key": "dup", "Value": "2"}),
        "ValidationException",
        "Duplicate Tag Keys provided as input: Duplicate Tag Key found dup",
    )
    refused(
        tag(*[{"Key": f"k{i}", "Value": "v"} for i in range(50)]),
        "ValidationException",
        "Number of Tags exceed the current limit for the provided ResourceArn",
    )
    refused(
        lambda: ddb_raw.untag_resource(ResourceArn=arn, TagKeys=[f"k{i}" for i in range(51)]),
        "ValidationException",
        "Number of Tags exceed the current limit for the provided ResourceArn",
    )
    refused(
        lambda: ddb_raw.untag_resource(ResourceArn=arn, TagKeys=[long_key]),
        "ValidationException",
        f"The Tag Key provided is invalid, Key: {long_key}",
    )
    for name in ("abcd", table):
        refused(
            lambda: ddb.tag_resource(ResourceArn=name, Tags=[{"Key": "a", "Value": "b"}]),
            "ValidationException",
            f"One or more parameter values were invalid: ARNs must start with 'arn:': {name}",
        )
    refused(
        lambda: ddb.list_tags_of_resource(ResourceArn=table),
        "ValidationException",
        f"One or more parameter values were invalid: ARNs must start with 'arn:': {table}",
    )
    foreign = arn.replace(":000000000000:", ":111111111111:")
    refused(lambda: ddb.list_tags_of_resource(ResourceArn=foreign), "AccessDeniedException", "Access is denied")
    for not_ours in (f"{arn}/backup/01489173575360-b308cd7d", "arn:aws:s3:::bucket"):
        refused(
            lambda: ddb.list_tags_of_resource(ResourceArn=not_ours),
            "ValidationException",
            f"One or more parameter values were invalid: Provided Arn is not a DynamoDB resource arn: {not_ours}",
        )
    refused(
        lambda: ddb_raw.untag_resource(ResourceArn=arn, TagKeys=["AWS:Name"]),
        "ValidationException",
        "Tag Key cannot be prefixed with aws:, Key: AWS:Name",
    )
    index_arn = f"{arn}/index/by-x"
    refused(
        lambda: ddb.tag_resource(ResourceArn=index_arn, Tags=[{"Key": "a", "Value": "b"}]),
        "ValidationException",
        "One or more parameter values were invalid: Invalid resource arn provided, only table or stream is "
        f"accepted. Provided resource arn: {index_arn}",
    )
    missing = arn.rsplit("/", 1)[0] + "/" + unique_name()
    for call in (
        lambda: ddb.tag_resource(ResourceArn=missing, Tags=[{"Key": "a", "Value": "b"}]),
        lambda: ddb.untag_resource(ResourceArn=missing, TagKeys=["a"]),
        lambda: ddb.list_tags_of_resource(ResourceArn=missing),
    ):
        refused(call, "ResourceNotFoundException", f"Requested resource not found: ResourceArn: {missing} not found")
    # The limit counts the set after the change: 49 more on top of one is 50.
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": f"k{i}", "Value": "v"} for i in range(49)])
    assert len(all_tags(ddb, arn)) == 50
    # Removing an absent key is a no-op; a NextToken DynamoDB did not issue is ignored.
    ddb.untag_resource(ResourceArn=arn, TagKeys=["never-set"])
    assert len(ddb.list_tags_of_resource(ResourceArn=arn, NextToken="bogus")["Tags"]) == 50


def test_create_table_checks_its_tags(ddb_raw):
    """CreateTable refuses bad Tags with the tag operations' texts and makes
    no table; an empty list is fine (DDB-TABLE-110)."""
    args = dict(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    name = unique_name()
    for tags, message in (
        ([{"Key": "aws:foo", "Value": "v"}], "Tag Key cannot be prefixed with aws:, Key: aws:foo"),
        ([{"Key": "a#b", "Value": "v"}], "The Tag Key provided is invalid, Key: a#b"),
        (
            [{"Key": f"k{i}", "Value": "v"} for i in range(51)],
            "Number of Tags exceed the current limit for the provided ResourceArn",
        ),
    ):
        expect_error(lambda: ddb_raw.create_table(TableName=name, Tags=tags, **args), "ValidationException", message)
        expect_error(lambda: ddb_raw.describe_table(TableName=name), "ResourceNotFoundException")
    ddb_raw.create_table(TableName=name, Tags=[], **args)
    try:
        arn = ddb_raw.describe_table(TableName=name)["Table"]["TableArn"]
        assert ddb_raw.list_tags_of_resource(ResourceArn=arn)["Tags"] == []
    finally:
        ddb_raw.delete_table(TableName=name)


def test_describe_endpoints_names_the_address_the_client_used(ddb, endpoint):
    [only] = ddb.describe_endpoints()["Endpoints"]
    assert only == {"Address": urlparse(endpoint).netloc, "CachePeriodInMinutes": 1440}


def test_a_table_arn_works_as_its_name(ddb, make_table):
    table = make_table()
    arn = arn_of(ddb, table)
    ddb.put_item(TableName=arn, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    assert ddb.get_item(TableName=table, Key={"pk": {"S": "a"}})["Item"]["v"] == {"N": "1"}
    out = ddb.get_item(TableName=arn, Key={"pk": {"S": "a"}}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"]["TableName"] == arn, "echoes the caller's form"
    got = ddb.batch_get_item(RequestItems={arn: {"Keys": [{"pk": {"S": "a"}}]}})
    assert list(got["Responses"]) == [arn]
    ddb.transact_write_items(TransactItems=[{"Delete": {"TableName": arn, "Key": {"pk": {"S": "a"}}}}])
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": {"S": "a"}})
    assert ddb.describe_table(TableName=arn)["Table"]["TableName"] == table
    other_region = arn.replace(":us-east-1:", ":eu-west-1:")
    expect_error(
        lambda: ddb.describe_table(TableName=other_region),
        "ValidationException",
        f"1 validation error detected: Invalid AWS region in '{other_region}'",
    )
    foreign = arn.replace(":000000000000:", ":111111111111:")
    expect_error(lambda: ddb.describe_table(TableName=foreign), "AccessDeniedException", "Access is denied")


@pytest.mark.parametrize("region", ["eu-west-1", "ap-southeast-2"])
def test_each_region_has_its_own_tables(endpoint, region):
    import boto3

    from conftest import boto_args, make_client

    here = make_client(endpoint)
    there = boto3.client("dynamodb", **{**boto_args(endpoint, region_name=region), "region_name": region})
    name = unique_name()
    there.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        desc = there.describe_table(TableName=name)["Table"]
        assert desc["TableArn"] == f"arn:aws:dynamodb:{region}:000000000000:table/{name}"
        assert name not in here.list_tables()["TableNames"]
        expect_error(lambda: here.describe_table(TableName=name), "ResourceNotFoundException")
    finally:
        there.delete_table(TableName=name)


def test_time_to_live_settings(ddb, ddb_raw, make_table):
    table = make_table()
    assert ddb.describe_time_to_live(TableName=table)["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    expect_error(
        lambda: ddb.update_time_to_live(
            TableName=table, TimeToLiveSpecification={"Enabled": False, "AttributeName": "expires"}
        ),
        "ValidationException",
        "TimeToLive is already disabled",
    )
    out = ddb.update_time_to_live(TableName=table, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    assert out["TimeToLiveSpecification"] == {"Enabled": True, "AttributeName": "expires"}
    assert ddb.describe_time_to_live(TableName=table)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED",
        "AttributeName": "expires",
    }
    # A second change within the hour is refused (S118).
    expect_error(
        lambda: ddb.update_time_to_live(
            TableName=table, TimeToLiveSpecification={"Enabled": False, "AttributeName": "expires"}
        ),
        "ValidationException",
        "Time to live has been modified multiple times within a fixed interval",
    )
    # A change that could never apply is refused for that, even within the
    # hour (ScyllaDB's Alternator suite, run against DynamoDB: test_ttl_enable;
    # another attribute while on: ack-api-quirks DDB-TABLE-147, live 2026-10).
    expect_error(
        lambda: ddb.update_time_to_live(
            TableName=table, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"}
        ),
        "ValidationException",
        "TimeToLive is already enabled",
    )
    expect_error(
        lambda: ddb.update_time_to_live(
            TableName=table, TimeToLiveSpecification={"Enabled": True, "AttributeName": "other"}
        ),
        "ValidationException",
        "TimeToLive is active on a different AttributeName: current AttributeName is expires",
    )
    expect_error(
        lambda: ddb.update_time_to_live(TableName=table, TimeToLiveSpecification={"Enabled": False, "AttributeName": "dog"}),
        "ValidationException",
        "TimeToLive is active on a different AttributeName: current AttributeName is expires",
    )
    expect_error(
        lambda: ddb.describe_time_to_live(TableName=unique_name()),
        "ResourceNotFoundException",
        startswith="Requested resource not found: Table: ",
    )
    expect_error(
        lambda: ddb_raw.update_time_to_live(
            TableName=table, TimeToLiveSpecification={"Enabled": True, "AttributeName": ""}
        ),
        "ValidationException",
        "1 validation error detected: Value '' at 'timeToLiveSpecification.attributeName' failed to satisfy "
        "constraint: Member must have length greater than or equal to 1",
    )


def test_cors_headers_for_a_browser(endpoint):
    import requests

    from conftest import signed_headers

    body = b"{}"
    headers = signed_headers(endpoint, "DynamoDB_20120810.ListTables", body)
    headers["Origin"] = "http://localhost:5173"
    resp = requests.post(endpoint, data=body, headers=headers, timeout=10)
    assert resp.status_code == 200
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    assert resp.headers["Access-Control-Expose-Headers"] == "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date"
    pre = requests.options(
        endpoint,
        headers={
            "Origin": "http://localhost:5173",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,x-amz-target",
        },
        timeout=10,
    )
    assert pre.status_code == 200
    assert pre.headers["Access-Control-Allow-Methods"] == "POST"
    assert pre.headers["Access-Control-Allow-Headers"] == "content-type,x-amz-target"


def test_a_table_named_by_name_and_by_arn_in_one_request_is_one_table(ddb, make_table):
    table = make_table()
    arn = arn_of(ddb, table)
    # One transaction naming it both ways locks it once (and finishes).
    ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": table, "Item": {"pk": {"S": "a"}}}},
            {"Put": {"TableName": arn, "Item": {"pk": {"S": "b"}}}},
        ]
    )
    expect_error(
        lambda: ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": {"pk": {"S": "c"}}}},
                {"Delete": {"TableName": arn, "Key": {"pk": {"S": "c"}}}},
            ]
        ),
        "ValidationException",
        "Transaction request cannot include multiple operations on one item",
    )
    got = ddb.transact_get_items(
        TransactItems=[{"Get": {"TableName": table, "Key": {"pk": {"S": "a"}}}}, {"Get": {"TableName": arn, "Key": {"pk": {"S": "b"}}}}]
    )
    assert [r["Item"]["pk"]["S"] for r in got["Responses"]] == ["a", "b"]
    expect_error(
        lambda: ddb.batch_write_item(
            RequestItems={
                table: [{"PutRequest": {"Item": {"pk": {"S": "d"}, "v": {"N": "1"}}}}],
                arn: [{"PutRequest": {"Item": {"pk": {"S": "d"}, "v": {"N": "2"}}}}],
            }
        ),
        "ValidationException",
        "Provided list of item keys contains duplicates",
    )
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": {"S": "d"}})
    # In one BatchGetItem the two forms are one entry, under the form sent
    # first, each key read once (S165).
    ddb.put_item(TableName=table, Item={"pk": {"S": "e"}, "v": {"S": "x"}})
    got = ddb.batch_get_item(
        RequestItems={
            arn: {"Keys": [{"pk": {"S": "e"}}]},
            table: {"Keys": [{"pk": {"S": "e"}}, {"pk": {"S": "a"}}]},
        },
        ReturnConsumedCapacity="TOTAL",
    )
    assert list(got["Responses"]) == [arn]
    assert sorted(i["pk"]["S"] for i in got["Responses"][arn]) == ["a", "e"]
    assert [(c["TableName"], c["CapacityUnits"]) for c in got["ConsumedCapacity"]] == [(arn, 1.0)]
    # A replayed idempotent transaction names the table as it was sent.
    put_f = [{"Put": {"TableName": arn, "Item": {"pk": {"S": "f"}}}}]
    first = ddb.transact_write_items(TransactItems=put_f, ClientRequestToken="tok-arn", ReturnConsumedCapacity="TOTAL")
    again = ddb.transact_write_items(TransactItems=put_f, ClientRequestToken="tok-arn", ReturnConsumedCapacity="TOTAL")
    assert [c["TableName"] for c in first["ConsumedCapacity"] + again["ConsumedCapacity"]] == [arn, arn]


def test_tag_and_untag_answer_with_an_empty_body(ddb, endpoint, make_table):
    # ScyllaDB's Alternator suite, run against DynamoDB: test_tags_return_empty_body.
    arn = arn_of(ddb, make_table())
    tagged = raw_post(endpoint, "DynamoDB_20120810.TagResource", {"ResourceArn": arn, "Tags": [{"Key": "k", "Value": "v"}]})
    assert (tagged.status_code, tagged.content, tagged.headers["Content-Length"]) == (200, b"", "0")
    untagged = raw_post(endpoint, "DynamoDB_20120810.UntagResource", {"ResourceArn": arn, "TagKeys": ["k"]})
    assert (untagged.status_code, untagged.content) == (200, b"")
    assert all_tags(ddb, arn) == []

