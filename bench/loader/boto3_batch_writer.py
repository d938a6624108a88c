"""The baseline: boto3's Table.batch_writer loading a JSON Lines file, as a
user of seed 000's write-ups would (numbers as Decimal, one put_item per
record, batch_writer flushing 25 at a time and re-sending UnprocessedItems).
Prints one JSON line: items, seconds, items/s."""

import json
import sys
import time
from decimal import Decimal

import boto3


def main():
    endpoint, table_name, path = sys.argv[1], sys.argv[2], sys.argv[3]
    ddb = boto3.resource("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                         aws_access_key_id="x", aws_secret_access_key="y")
    table = ddb.Table(table_name)
    n = 0
    start = time.perf_counter()
    with open(path) as f, table.batch_writer() as writer:
        for line in f:
            writer.put_item(Item=json.loads(line, parse_float=Decimal, parse_int=Decimal))
            n += 1
    secs = time.perf_counter() - start
    print(json.dumps({"items": n, "seconds": secs, "items_per_s": n / secs}))


if __name__ == "__main__":
    main()
