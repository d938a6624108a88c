"""Resource-based policies through boto3 (its own checks off): CreateTable's
ResourcePolicy, PutResourcePolicy, GetResourcePolicy, DeleteResourcePolicy,
with the texts and rules ack-api-quirks recorded from the live service in
October 2026 (DDB-TABLE-205 to -214, -233, -351 to -356) and moto's tests
run against AWS. The revision cooldown's expiry is tested in modelled time
(crates/engine/tests/policies.rs); here only its start, right after a
change."""

from __future__ import annotations

import json
import re

from conftest import expect_error, unique_name

IV = "One or more parameter values were invalid: "
ACCOUNT = "000000000000"
KEY = dict(
    AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
    BillingMode="PAY_PER_REQUEST",
)


def policy(arn, action="dynamodb:GetItem", principal=None, **extra):
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": principal or {"AWS": ACCOUNT},
                    "Action": [action],
                    "Resource": arn,
                    **extra,
                }
            ],
        },
        indent=2,
    )


def canonical(arn, action="dynamodb:GetItem"):
    return (
        '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::'
        + ACCOUNT
        + ':root"},"Action":"'
        + action
        + '","Resource":"'
        + arn
        + '"}]}'
    )


def test_a_policy_given_with_the_table_and_the_revision_rules(ddb_raw, make_table):
    name = unique_name()
    arn = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/{name}"
    created = ddb_raw.create_table(TableName=name, ResourcePolicy=policy(arn), **KEY)
    make_table.created.append(name)
    # DescribeTable says nothing of it (DDB-TABLE-233).
    assert "ResourcePolicy" not in json.dumps(created["TableDescription"], default=str)
    got = ddb_raw.get_resource_policy(ResourceArn=arn)
    assert got["Policy"] == canonical(arn)
    revision = got["RevisionId"]
    assert re.fullmatch(r"\d{13}", revision), revision
    # The same document, however written, changes nothing.
    again = ddb_raw.put_resource_policy(ResourceArn=arn, Policy=canonical(arn))
    assert again["RevisionId"] == revision
    # Another document right after a change: the slot is cooling down.
    err = expect_error(
        lambda: ddb_raw.put_resource_policy(ResourceArn=arn, Policy=policy(arn, "dynamodb:PutItem")),
        "ThrottlingException",
    )
    assert re.fullmatch(
        rf"Resource-based policy for table {name} modified within the previous 15000 milliseconds\. "
        r"Please try again after \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\.",
        err.response["Error"]["Message"],
    ), err.response["Error"]["Message"]
    assert "throttlingReasons" not in err.response
    # A wrong expectation is answered first.
    prefix = "Resource-based policy not found for the provided ResourceArn: "
    expect_error(
        lambda: ddb_raw.put_resource_policy(ResourceArn=arn, Policy=policy(arn, "dynamodb:PutItem"), ExpectedRevisionId="1"),
        "PolicyNotFoundException",
        f"{prefix}Requested update for policy with revision id 1, but the policy associated to target table {name} has revision id {revision}.",
    )
    expect_error(
        lambda: ddb_raw.put_resource_policy(ResourceArn=arn, Policy=policy(arn), ExpectedRevisionId="NO_POLICY"),
        "PolicyNotFoundException",
        f"{prefix}Requested policy update expecting none to be present for table {name}, but a policy exists with revision id {revision}.",
    )


def test_a_table_without_a_policy_and_its_stream_slot(ddb_raw, make_table):
    name = make_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    desc = ddb_raw.describe_table(TableName=name)["Table"]
    arn, stream = desc["TableArn"], desc["LatestStreamArn"]
    prefix = "Resource-based policy not found for the provided ResourceArn: "
    expect_error(lambda: ddb_raw.get_resource_policy(ResourceArn=arn), "PolicyNotFoundException", prefix + arn)
    # Deleting nothing is no error, and answers no revision.
    out = ddb_raw.delete_resource_policy(ResourceArn=arn)
    assert "RevisionId" not in out
    expect_error(
        lambda: ddb_raw.delete_resource_policy(ResourceArn=arn, ExpectedRevisionId="123456789"),
        "PolicyNotFoundException",
        f"{prefix}Requested update for policy with revision id 123456789, but table {name} has no associated policy.",
    )
    # The stream's slot is its own, for stream actions on stream resources.
    stream_policy = policy(stream, "dynamodb:GetRecords")
    expect_error(
        lambda: ddb_raw.put_resource_policy(ResourceArn=arn, Policy=policy(arn, "dynamodb:GetRecords")),
        "ValidationException",
        IV + 'Invalid policy document: The following action names are invalid: "dynamodb:GetRecords"',
    )
    expect_error(
        lambda: ddb_raw.put_resource_policy(ResourceArn=arn, Policy=stream_policy),
        "ValidationException",
        f'{IV}Invalid policy document: The relative-id "{stream.split(":", 5)[5]}" is invalid for ARN "{stream}"',
    )
    rev = ddb_raw.put_resource_policy(ResourceArn=stream, Policy=stream_policy)["RevisionId"]
    got = ddb_raw.get_resource_policy(ResourceArn=stream)
    assert (got["Policy"], got["RevisionId"]) == (canonical(stream, "dynamodb:GetRecords"), rev)
    expect_error(lambda: ddb_raw.get_resource_policy(ResourceArn=arn), "PolicyNotFoundException", prefix + arn)
    # The table's slot takes a policy at once while the stream's cools down.
    table_rev = ddb_raw.put_resource_policy(ResourceArn=arn, Policy=policy(arn))["RevisionId"]
    expect_error(lambda: ddb_raw.delete_resource_policy(ResourceArn=stream), "ThrottlingException")
    assert ddb_raw.get_resource_policy(ResourceArn=arn)["RevisionId"] == table_rev
    assert ddb_raw.get_resource_policy(ResourceArn=stream)["RevisionId"] == rev


def test_arns_and_documents_are_checked_with_dynamodbs_texts(ddb_raw, make_table):
    name = make_table()
    arn = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/{name}"
    cases = [
        (name, "ValidationException", f"{IV}ARNs must start with 'arn:': {name}"),
        (arn.replace(ACCOUNT, "111122223333"), "ValidationException",
         "This action is only supported by accounts that match the resource owner\u2019s account."),
        (arn.replace("us-east-1", "us-west-2"), "ValidationException", f"{IV}Invalid resource Arn: {arn.replace('us-east-1', 'us-west-2')}"),
        (arn + "/index/g", "ValidationException",
         f"{IV}Invalid resource arn provided, only table or stream is accepted. Provided resource arn: {arn}/index/g"),
        (arn + "/backup/0170", "ValidationException", f"{IV}Provided Arn is not a DynamoDB resource arn: {arn}/backup/0170"),
        (arn + "-missing", "ResourceNotFoundException", f"Requested resource not found: Table: {name}-missing not found"),
    ]
    for target, code, message in cases:
        expect_error(lambda: ddb_raw.get_resource_policy(ResourceArn=target), code, message)
    documents = [
        ("{not json", IV + "Invalid policy document: This policy contains invalid Json"),
        (json.dumps({"Statement": []}), IV + "Invalid policy document: Could not parse the policy: Statement is empty!"),
        (policy(arn, principal="*"),
         "Resource-based policy grants unbounded access in one or more elements. Please revise the policy to ensure least-privilege form of access"),
        (" " * 20481, IV + "Maximum policy size of 20480 bytes exceeded"),
    ]
    for document, message in documents:
        expect_error(lambda: ddb_raw.put_resource_policy(ResourceArn=arn, Policy=document), "ValidationException", message)
    lockout = json.dumps({"Statement": [{"Effect": "Deny", "Principal": "*", "Action": "dynamodb:*", "Resource": "*"}]})
    expect_error(
        lambda: ddb_raw.put_resource_policy(ResourceArn=arn, Policy=lockout),
        "AccessDeniedException",
        "The new resource policy will not allow you to update the resource policy in the future.",
    )
    rev = ddb_raw.put_resource_policy(ResourceArn=arn, Policy=lockout, ConfirmRemoveSelfResourceAccess=True)["RevisionId"]
    got = ddb_raw.get_resource_policy(ResourceArn=arn)
    assert got["RevisionId"] == rev
    assert got["Policy"] == '{"Version":"2008-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"dynamodb:*","Resource":"*"}]}'
    # Deleting within the cooldown of the change is throttled.
    expect_error(lambda: ddb_raw.delete_resource_policy(ResourceArn=arn), "ThrottlingException")
    # A CreateTable with a bad policy creates nothing.
    other = unique_name()
    expect_error(
        lambda: ddb_raw.create_table(TableName=other, ResourcePolicy="{not json", **KEY),
        "ValidationException",
        IV + "Invalid policy document: This policy contains invalid Json",
    )
    assert other not in ddb_raw.list_tables()["TableNames"]
