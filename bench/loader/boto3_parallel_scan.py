"""The dump baseline: a Python parallel Scan with boto3, as the AWS
documentation's parallel-scan example does (one thread per segment, the
low-level client, pages of up to 1 MB), each item written as a DynamoDB
JSON export line {"Item": {...}} to one file. Prints one JSON line: items,
seconds, items/s."""

import json
import sys
import threading
import time

import boto3


def main():
    endpoint, table, segments, out_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="x", aws_secret_access_key="y")
    lock = threading.Lock()
    counts = [0] * segments
    start = time.perf_counter()
    with open(out_path, "w") as out:
        def scan(segment):
            kwargs = {"TableName": table, "Segment": segment, "TotalSegments": segments}
            while True:
                page = client.scan(**kwargs)
                lines = "".join(json.dumps({"Item": item}) + "\n" for item in page["Items"])
                with lock:
                    out.write(lines)
                counts[segment] += len(page["Items"])
                if "LastEvaluatedKey" not in page:
                    return
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

        threads = [threading.Thread(target=scan, args=(s,)) for s in range(segments)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    secs = time.perf_counter() - start
    n = sum(counts)
    print(json.dumps({"items": n, "seconds": secs, "items_per_s": n / secs}))


if __name__ == "__main__":
    main()
