"""PynamoDB (the Python DynamoDB ORM) against the server, used the way its
users use it: models declare their keys, a GSI with an INCLUDE projection, a
sparse GSI with ALL, and a KEYS_ONLY LSI; ``Model.create_table(wait=True)``
creates the tables; then save/get/update/delete with conditions and a
version attribute, queries on the table and both kinds of index, scans
(parallel segments), paging, batches, transactions and counts.

Each test gets its own freshly created tables (``models`` fixture), created
by PynamoDB itself and deleted afterwards."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pytest
from pynamodb.attributes import (
    BinaryAttribute,
    BinarySetAttribute,
    BooleanAttribute,
    DiscriminatorAttribute,
    JSONAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    NumberSetAttribute,
    UnicodeAttribute,
    UnicodeSetAttribute,
    UTCDateTimeAttribute,
    VersionAttribute,
)
from pynamodb.connection import Connection
from pynamodb.exceptions import (
    DeleteError,
    PutError,
    QueryError,
    ScanError,
    TableDoesNotExist,
    TransactWriteError,
    UpdateError,
)
from pynamodb.indexes import (
    AllProjection,
    GlobalSecondaryIndex,
    IncludeProjection,
    KeysOnlyProjection,
    LocalSecondaryIndex,
)
from pynamodb.models import Model
from pynamodb.transactions import TransactGet, TransactWrite

from conftest import ACCESS_KEY, REGION, SECRET_KEY, unique_name

CONDITION_FAILED = "The conditional request failed"


def table_meta(endpoint, name):
    """A model's Meta: this server, a fresh table name from `name`, on demand,
    and one attempt (a retried request would hide a server error)."""

    class Meta:
        table_name = unique_name(name)
        host = endpoint
        region = REGION
        aws_access_key_id = ACCESS_KEY
        aws_secret_access_key = SECRET_KEY
        billing_mode = "PAY_PER_REQUEST"
        max_retry_attempts = 0

    return Meta


def index(kind, name, projection, hash_key, range_key):
    """A GSI or LSI class (`kind`) named `name`, keyed by hash_key and
    range_key, each an (attribute name, attribute class) pair."""
    (hash_name, hash_type), (range_name, range_type) = hash_key, range_key
    meta = type("Meta", (), {"index_name": name, "projection": projection})
    attrs = {"Meta": meta, hash_name: hash_type(hash_key=True), range_name: range_type(range_key=True)}
    return type(name, (kind,), attrs)


def make_models(endpoint):
    """Declares the models against this server, with fresh table names."""

    ByStatus = index(
        GlobalSecondaryIndex, "by_status", IncludeProjection(["note"]), ("status", UnicodeAttribute), ("total", NumberAttribute)
    )
    # sparse: orders without a region are not in it
    ByRegion = index(
        GlobalSecondaryIndex, "by_region", AllProjection(), ("region", UnicodeAttribute), ("placed_at", UnicodeAttribute)
    )
    ByPlaced = index(
        LocalSecondaryIndex,
        "by_placed",
        KeysOnlyProjection(),
        ("customer", UnicodeAttribute),
        ("placed_at", UnicodeAttribute),
    )

    class Order(Model):
        Meta = table_meta(endpoint, "pynamodb-order")
        customer = UnicodeAttribute(hash_key=True)
        order_id = UnicodeAttribute(range_key=True)
        status = UnicodeAttribute()
        total = NumberAttribute()
        placed_at = UnicodeAttribute()
        region = UnicodeAttribute(null=True)
        note = UnicodeAttribute(null=True)
        tags = UnicodeSetAttribute(null=True)
        qty = NumberAttribute(default=0)
        lines = ListAttribute(of=UnicodeAttribute, null=True)
        version = VersionAttribute()

        by_status = ByStatus()
        by_region = ByRegion()
        by_placed = ByPlaced()

    class Product(Model):
        Meta = table_meta(endpoint, "pynamodb-product")
        sku = UnicodeAttribute(hash_key=True)
        price = NumberAttribute()
        stock = NumberAttribute(default=0)
        sizes = NumberSetAttribute(null=True)

    ByOwner = index(GlobalSecondaryIndex, "by_owner", AllProjection(), ("owner", UnicodeAttribute), ("sk", UnicodeAttribute))

    class Entry(Model):
        """Single-table polymorphism: one table, subclasses told apart by `kind`."""

        Meta = table_meta(endpoint, "pynamodb-entry")
        pk = UnicodeAttribute(hash_key=True)
        sk = UnicodeAttribute(range_key=True)
        kind = DiscriminatorAttribute()
        owner = UnicodeAttribute(null=True)
        by_owner = ByOwner()

    class Note(Entry, discriminator="note"):
        text = UnicodeAttribute()

    class Photo(Entry, discriminator="photo"):
        url = UnicodeAttribute()
        size = NumberAttribute()

    class Address(MapAttribute):
        city = UnicodeAttribute()
        zip = UnicodeAttribute(null=True)

    class Profile(Model):
        Meta = table_meta(endpoint, "pynamodb-profile")
        user = UnicodeAttribute(hash_key=True)
        address = Address(null=True)
        avatar = BinaryAttribute(null=True, legacy_encoding=False)
        keys = BinarySetAttribute(null=True, legacy_encoding=False)
        active = BooleanAttribute(null=True)
        settings = JSONAttribute(null=True)
        joined = UTCDateTimeAttribute(null=True)
        scores = NumberSetAttribute(null=True)
        history = ListAttribute(null=True)
        logins = NumberAttribute(null=True)

    connection = Connection(
        host=endpoint,
        region=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        max_retry_attempts=0,
    )
    return SimpleNamespace(
        Order=Order,
        Product=Product,
        ByStatus=ByStatus,
        ByRegion=ByRegion,
        ByPlaced=ByPlaced,
        Entry=Entry,
        Note=Note,
        Photo=Photo,
        Profile=Profile,
        Address=Address,
        connection=connection,
    )


def created(endpoint, *names):
    """The models, with the named ones' tables created by PynamoDB; the
    tables are deleted afterwards."""
    m = make_models(endpoint)
    tables = [getattr(m, n) for n in names]
    for model in tables:
        model.create_table(wait=True)
    yield m
    for model in tables:
        try:
            model.delete_table()
        except Exception:
            pass


@pytest.fixture
def models(endpoint):
    yield from created(endpoint, "Order", "Product")


@pytest.fixture
def more_models(endpoint):
    yield from created(endpoint, "Entry", "Profile")


# customer, order_id, status, total, placed_at, region, note
ORDERS = [
    ("c1", "o1", "open", 30, "2026-01-05", "eu", "leave at door"),
    ("c1", "o2", "shipped", 120, "2026-01-02", "us", None),
    ("c1", "o3", "open", 75, "2026-01-09", None, None),
    ("c1", "o4", "cancelled", 10, "2026-01-01", "eu", None),
    ("c2", "o1", "open", 50, "2026-01-03", "eu", None),
    ("c2", "o2", "shipped", 200, "2026-01-07", "us", "fragile"),
]


def seed_orders(Order):
    for customer, order_id, status, total, placed_at, region, note in ORDERS:
        Order(customer, order_id, status=status, total=total, placed_at=placed_at, region=region, note=note).save()


def order_values(customer, order_id, status, total, placed_at, **rest):
    """An Order's whole attribute_values: its required attributes and `rest`."""
    return {"customer": customer, "order_id": order_id, "status": status, "total": total, "placed_at": placed_at, **rest}


def keys(results):
    return [(o.customer, o.order_id) for o in results]


# --- tables -----------------------------------------------------------------


def test_create_table_builds_the_declared_indexes(models):
    Order = models.Order
    assert Order.exists() is True
    desc = Order.describe_table()
    assert desc["TableName"] == Order.Meta.table_name
    assert desc["TableStatus"] == "ACTIVE"
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert desc["KeySchema"] == [
        {"AttributeName": "customer", "KeyType": "HASH"},
        {"AttributeName": "order_id", "KeyType": "RANGE"},
    ]
    assert sorted((d["AttributeName"], d["AttributeType"]) for d in desc["AttributeDefinitions"]) == [
        ("customer", "S"),
        ("order_id", "S"),
        ("placed_at", "S"),
        ("region", "S"),
        ("status", "S"),
        ("total", "N"),
    ]
    gsis = {g["IndexName"]: g for g in desc["GlobalSecondaryIndexes"]}
    assert sorted(gsis) == ["by_region", "by_status"]
    assert gsis["by_status"]["KeySchema"] == [
        {"AttributeName": "status", "KeyType": "HASH"},
        {"AttributeName": "total", "KeyType": "RANGE"},
    ]
    assert gsis["by_status"]["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["note"]}
    assert gsis["by_status"]["IndexStatus"] == "ACTIVE"
    assert gsis["by_region"]["KeySchema"] == [
        {"AttributeName": "region", "KeyType": "HASH"},
        {"AttributeName": "placed_at", "KeyType": "RANGE"},
    ]
    assert gsis["by_region"]["Projection"] == {"ProjectionType": "ALL"}
    assert gsis["by_region"]["IndexStatus"] == "ACTIVE"
    lsis = desc["LocalSecondaryIndexes"]
    assert [(i["IndexName"], i["KeySchema"], i["Projection"]) for i in lsis] == [
        (
            "by_placed",
            [{"AttributeName": "customer", "KeyType": "HASH"}, {"AttributeName": "placed_at", "KeyType": "RANGE"}],
            {"ProjectionType": "KEYS_ONLY"},
        )
    ]
    # create_table on an existing table is a no-op for PynamoDB (it checks exists())
    Order.create_table(wait=True)
    assert models.Product.describe_table()["KeySchema"] == [{"AttributeName": "sku", "KeyType": "HASH"}]


# --- items --------------------------------------------------------------------


def test_save_get_and_delete(models):
    Order = models.Order
    order = Order("c9", "o1", status="open", total=12.5, placed_at="2026-02-01", tags={"gift", "rush"}, lines=["a", "b"])
    order.save()
    assert order.version == 1

    got = Order.get("c9", "o1")
    assert got.attribute_values == order_values(
        "c9", "o1", "open", 12.5, "2026-02-01", tags={"gift", "rush"}, qty=0, lines=["a", "b"], version=1
    )

    partial = Order.get("c9", "o1", attributes_to_get=["status", "total"])
    assert partial.status == "open"
    assert partial.total == 12.5
    assert partial.placed_at is None

    with pytest.raises(Order.DoesNotExist):
        Order.get("c9", "nope")

    got.delete()
    with pytest.raises(Order.DoesNotExist):
        Order.get("c9", "o1")
    # refresh of a deleted item raises too
    with pytest.raises(Order.DoesNotExist):
        order.refresh()


def test_update_actions_set_add_remove_delete_append(models):
    Order = models.Order
    order = Order("c1", "u1", status="open", total=10, placed_at="2026-03-01", note="n", tags={"a", "b", "c"}, lines=["x"])
    order.save()

    order.update(
        actions=[
            Order.status.set("shipped"),
            Order.total.add(5),
            Order.qty.set(Order.qty + 3),
            Order.note.remove(),
            Order.tags.delete({"a", "c"}),
            Order.lines.set(Order.lines.append(["y", "z"])),
        ]
    )
    # update() refreshes the instance from ALL_NEW
    assert order.status == "shipped"
    assert order.total == 15
    assert order.qty == 3
    assert order.note is None
    assert order.tags == {"b"}
    assert order.lines == ["x", "y", "z"]
    assert order.version == 2

    order.update(actions=[Order.tags.add({"d"}), Order.lines.set(Order.lines.prepend(["w"])), Order.qty.add(-1)])
    got = Order.get("c1", "u1")
    assert got.attribute_values == order_values(
        "c1", "u1", "shipped", 15, "2026-03-01", tags={"b", "d"}, qty=2, lines=["w", "x", "y", "z"], version=3
    )

    # deleting the last member of a set removes the attribute
    got.update(actions=[Order.tags.delete({"b", "d"}), Order.region.set("eu")])
    got = Order.get("c1", "u1")
    assert got.tags is None
    assert got.region == "eu"
    assert [o.order_id for o in Order.by_region.query("eu")] == ["u1"]


def test_conditional_writes(models):
    Order = models.Order
    Product = models.Product
    Product("p1", price=10, stock=2).save(condition=Product.sku.does_not_exist())
    with pytest.raises(PutError) as err:
        Product("p1", price=99).save(condition=Product.sku.does_not_exist())
    assert err.value.cause_response_code == "ConditionalCheckFailedException"
    assert err.value.cause_response_message == CONDITION_FAILED
    assert Product.get("p1").price == 10

    p = Product.get("p1")
    # decrement stock only while there is some
    p.update(actions=[Product.stock.add(-1)], condition=Product.stock > 0)
    p.update(actions=[Product.stock.add(-1)], condition=Product.stock > 0)
    with pytest.raises(UpdateError) as err:
        p.update(actions=[Product.stock.add(-1)], condition=Product.stock > 0)
    assert err.value.cause_response_code == "ConditionalCheckFailedException"
    assert err.value.cause_response_message == CONDITION_FAILED
    assert Product.get("p1").stock == 0

    p.update(actions=[Product.sizes.add({38, 40})], condition=Product.price.between(5, 15) & Product.sizes.does_not_exist())
    assert Product.get("p1").sizes == {38, 40}
    with pytest.raises(UpdateError) as err:
        p.update(actions=[Product.price.set(1)], condition=Product.sizes.contains(42))
    assert err.value.cause_response_code == "ConditionalCheckFailedException"

    with pytest.raises(DeleteError) as err:
        p.delete(condition=Product.price > 10)
    assert err.value.cause_response_code == "ConditionalCheckFailedException"
    assert err.value.cause_response_message == CONDITION_FAILED
    p.delete(condition=Product.price == 10)
    with pytest.raises(Product.DoesNotExist):
        Product.get("p1")

    # conditions on an item with a version attribute combine with the version check
    o = Order("c1", "k1", status="open", total=1, placed_at="2026-01-01")
    o.save(condition=Order.customer.does_not_exist())
    with pytest.raises(UpdateError) as err:
        o.update(actions=[Order.status.set("shipped")], condition=Order.status.is_in("cancelled", "shipped"))
    assert err.value.cause_response_code == "ConditionalCheckFailedException"
    o.update(actions=[Order.status.set("shipped")], condition=Order.status.is_in("open", "new"))
    assert Order.get("c1", "k1").status == "shipped"


def test_version_attribute_optimistic_locking(models):
    Order = models.Order
    Order("c1", "v1", status="open", total=1, placed_at="2026-01-01").save()
    mine = Order.get("c1", "v1")
    theirs = Order.get("c1", "v1")
    assert mine.version == theirs.version == 1

    theirs.status = "shipped"
    theirs.save()
    assert theirs.version == 2

    mine.status = "cancelled"
    with pytest.raises(PutError) as err:
        mine.save()
    assert err.value.cause_response_code == "ConditionalCheckFailedException"
    assert err.value.cause_response_message == CONDITION_FAILED
    with pytest.raises(UpdateError) as err:
        mine.update(actions=[Order.note.set("late")])
    assert err.value.cause_response_code == "ConditionalCheckFailedException"
    with pytest.raises(DeleteError) as err:
        mine.delete()
    assert err.value.cause_response_code == "ConditionalCheckFailedException"

    current = Order.get("c1", "v1")
    assert (current.status, current.version, current.note) == ("shipped", 2, None)

    mine.refresh()
    assert (mine.status, mine.version) == ("shipped", 2)
    mine.update(actions=[Order.note.set("late")])
    assert mine.version == 3
    # a new object for an existing key expects no item to be there
    with pytest.raises(PutError) as err:
        Order("c1", "v1", status="open", total=1, placed_at="2026-01-01").save()
    assert err.value.cause_response_code == "ConditionalCheckFailedException"
    # ... unless the version check is switched off (last writer wins)
    Order("c1", "v1", status="open", total=1, placed_at="2026-01-01").save(add_version_condition=False)
    assert Order.get("c1", "v1").version == 1
    mine.delete(add_version_condition=False)
    assert Order.count("c1") == 0


# --- queries ------------------------------------------------------------------


def test_query_table_with_range_conditions_and_filters(models):
    Order = models.Order
    seed_orders(Order)

    assert keys(Order.query("c1")) == [("c1", "o1"), ("c1", "o2"), ("c1", "o3"), ("c1", "o4")]
    assert keys(Order.query("c1", scan_index_forward=False)) == [("c1", "o4"), ("c1", "o3"), ("c1", "o2"), ("c1", "o1")]
    assert keys(Order.query("c1", Order.order_id.between("o2", "o3"))) == [("c1", "o2"), ("c1", "o3")]
    assert keys(Order.query("c1", Order.order_id > "o2")) == [("c1", "o3"), ("c1", "o4")]
    assert keys(Order.query("c1", Order.order_id <= "o2")) == [("c1", "o1"), ("c1", "o2")]
    assert keys(Order.query("c2", Order.order_id.startswith("o"))) == [("c2", "o1"), ("c2", "o2")]
    assert keys(Order.query("c1", filter_condition=Order.total >= 30)) == [("c1", "o1"), ("c1", "o2"), ("c1", "o3")]
    assert keys(
        Order.query("c1", Order.order_id >= "o2", filter_condition=(Order.status == "open") | Order.region.does_not_exist())
    ) == [("c1", "o3")]
    assert keys(Order.query("c1", filter_condition=Order.note.exists())) == [("c1", "o1")]
    assert list(Order.query("nobody")) == []

    [o] = Order.query("c2", Order.order_id == "o2", attributes_to_get=["total", "note"])
    assert (o.total, o.note, o.status) == (200, "fragile", None)


def test_query_gsi_with_include_projection(models):
    Order, ByStatus = models.Order, models.ByStatus
    seed_orders(Order)

    results = list(Order.by_status.query("open"))
    assert [(o.customer, o.order_id, o.total) for o in results] == [("c1", "o1", 30), ("c2", "o1", 50), ("c1", "o3", 75)]
    # INCLUDE ["note"]: the table key, the index key and note, nothing else
    # (qty: 0 is PynamoDB filling in the attribute's default)
    assert results[0].attribute_values == {
        "customer": "c1",
        "order_id": "o1",
        "status": "open",
        "total": 30,
        "note": "leave at door",
        "qty": 0,
    }
    assert results[1].attribute_values == {"customer": "c2", "order_id": "o1", "status": "open", "total": 50, "qty": 0}

    assert [o.total for o in Order.by_status.query("open", ByStatus.total > 30)] == [50, 75]
    assert [o.total for o in Order.by_status.query("open", ByStatus.total.between(30, 50))] == [30, 50]
    assert [o.total for o in Order.by_status.query("shipped", scan_index_forward=False)] == [200, 120]
    assert [o.total for o in Order.by_status.query("open", filter_condition=Order.note.exists())] == [30]
    assert [o.total for o in Order.by_status.query("open", filter_condition=Order.customer == "c1")] == [30, 75]
    assert Order.by_status.count("open") == 3
    assert Order.by_status.count("open", ByStatus.total < 60) == 2
    assert list(Order.by_status.query("returned")) == []

    # moving an item between index partitions
    o3 = Order.get("c1", "o3")
    o3.update(actions=[Order.status.set("shipped"), Order.total.set(80)])
    assert [o.total for o in Order.by_status.query("open")] == [30, 50]
    assert [o.total for o in Order.by_status.query("shipped")] == [80, 120, 200]


def test_query_sparse_gsi_with_all_projection(models):
    Order, ByRegion = models.Order, models.ByRegion
    seed_orders(Order)

    results = list(Order.by_region.query("eu"))
    assert keys(results) == [("c1", "o4"), ("c2", "o1"), ("c1", "o1")]  # by placed_at
    # ALL: every attribute of the item
    assert results[2].attribute_values == {
        "customer": "c1",
        "order_id": "o1",
        "status": "open",
        "total": 30,
        "placed_at": "2026-01-05",
        "region": "eu",
        "note": "leave at door",
        "qty": 0,
        "version": 1,
    }
    assert keys(Order.by_region.query("eu", ByRegion.placed_at >= "2026-01-03")) == [("c2", "o1"), ("c1", "o1")]
    assert keys(Order.by_region.query("eu", ByRegion.placed_at.startswith("2026-01-0"), filter_condition=Order.total < 40)) == [
        ("c1", "o4"),
        ("c1", "o1"),
    ]
    assert keys(Order.by_region.query("us", scan_index_forward=False)) == [("c2", "o2"), ("c1", "o2")]
    # o3 has no region: not in the index, neither in a query nor a scan
    assert sorted(keys(Order.by_region.scan())) == [("c1", "o1"), ("c1", "o2"), ("c1", "o4"), ("c2", "o1"), ("c2", "o2")]
    assert sorted(keys(Order.by_region.scan(Order.status == "shipped"))) == [("c1", "o2"), ("c2", "o2")]

    # giving o3 a region puts it in the index; removing it takes it out again
    o3 = Order.get("c1", "o3")
    o3.update(actions=[Order.region.set("eu")])
    assert keys(Order.by_region.query("eu")) == [("c1", "o4"), ("c2", "o1"), ("c1", "o1"), ("c1", "o3")]
    o3.update(actions=[Order.region.remove()])
    assert keys(Order.by_region.query("eu")) == [("c1", "o4"), ("c2", "o1"), ("c1", "o1")]


def test_query_lsi_with_keys_only_projection(models):
    Order, ByPlaced = models.Order, models.ByPlaced
    seed_orders(Order)

    results = list(Order.by_placed.query("c1"))
    assert [(o.order_id, o.placed_at) for o in results] == [
        ("o4", "2026-01-01"),
        ("o2", "2026-01-02"),
        ("o1", "2026-01-05"),
        ("o3", "2026-01-09"),
    ]
    # KEYS_ONLY: the table key and the index key only (qty: PynamoDB's default)
    assert results[0].attribute_values == {"customer": "c1", "order_id": "o4", "placed_at": "2026-01-01", "qty": 0}
    assert [o.order_id for o in Order.by_placed.query("c1", ByPlaced.placed_at > "2026-01-02")] == ["o1", "o3"]
    assert [o.order_id for o in Order.by_placed.query("c1", ByPlaced.placed_at < "2026-01-05", scan_index_forward=False)] == [
        "o2",
        "o4",
    ]
    assert [o.order_id for o in Order.by_placed.query("c2", ByPlaced.placed_at.between("2026-01-01", "2026-01-31"))] == [
        "o1",
        "o2",
    ]
    assert Order.by_placed.count("c1", ByPlaced.placed_at >= "2026-01-02") == 3


def test_query_pagination_with_limit_and_last_evaluated_key(models):
    Order = models.Order
    for i in range(7):
        Order("cp", f"o{i}", status="open", total=i, placed_at=f"2026-01-{10 + i}", region="eu").save()

    first = Order.query("cp", limit=3)
    assert [o.order_id for o in first] == ["o0", "o1", "o2"]
    assert first.last_evaluated_key == {"customer": {"S": "cp"}, "order_id": {"S": "o2"}}

    second = Order.query("cp", limit=3, last_evaluated_key=first.last_evaluated_key)
    assert [o.order_id for o in second] == ["o3", "o4", "o5"]
    third = Order.query("cp", limit=3, last_evaluated_key=second.last_evaluated_key)
    assert [o.order_id for o in third] == ["o6"]
    assert third.last_evaluated_key is None

    # page_size pages transparently: all items, fetched 2 at a time
    it = Order.query("cp", page_size=2)
    assert [o.order_id for o in it] == [f"o{i}" for i in range(7)]
    assert it.last_evaluated_key is None

    # an index page's key carries the table key and the index key
    page = Order.by_region.query("eu", limit=2)
    assert [o.order_id for o in page] == ["o0", "o1"]
    assert page.last_evaluated_key == {
        "customer": {"S": "cp"},
        "order_id": {"S": "o1"},
        "region": {"S": "eu"},
        "placed_at": {"S": "2026-01-11"},
    }
    rest = Order.by_region.query("eu", last_evaluated_key=page.last_evaluated_key)
    assert [o.order_id for o in rest] == ["o2", "o3", "o4", "o5", "o6"]

    lsi_page = Order.by_placed.query("cp", limit=4, scan_index_forward=False)
    assert [o.order_id for o in lsi_page] == ["o6", "o5", "o4", "o3"]
    assert lsi_page.last_evaluated_key == {
        "customer": {"S": "cp"},
        "order_id": {"S": "o3"},
        "placed_at": {"S": "2026-01-13"},
    }
    assert [o.order_id for o in Order.by_placed.query("cp", scan_index_forward=False, last_evaluated_key=lsi_page.last_evaluated_key)] == [
        "o2",
        "o1",
        "o0",
    ]


def test_count(models):
    Order = models.Order
    seed_orders(Order)
    assert Order.count("c1") == 4
    assert Order.count("c2") == 2
    assert Order.count("c3") == 0
    assert Order.count("c1", Order.order_id >= "o3") == 2
    assert Order.count("c1", filter_condition=Order.status == "open") == 2
    assert Order.count("c1", Order.order_id.between("o1", "o3"), filter_condition=Order.total > 50) == 2
    assert Order.by_region.count("eu") == 3
    assert Order.by_region.count("us", filter_condition=Order.total > 150) == 1


# --- scans and batches -----------------------------------------------------------


def test_batch_write_batch_get_and_scans(models):
    Product = models.Product
    with Product.batch_write() as batch:
        for i in range(60):
            batch.save(Product(f"sku-{i:03d}", price=i, stock=i % 4))

    assert sorted(p.sku for p in Product.scan()) == [f"sku-{i:03d}" for i in range(60)]

    # batch_get of more keys than one BatchGetItem takes (100): PynamoDB splits them
    wanted = [f"sku-{i:03d}" for i in range(0, 60, 2)] + [f"missing-{i}" for i in range(80)]
    got = list(Product.batch_get(wanted))
    assert sorted((p.sku, p.price, p.stock) for p in got) == [(f"sku-{i:03d}", i, i % 4) for i in range(0, 60, 2)]
    got = list(Product.batch_get(["sku-007", "sku-008"], attributes_to_get=["price"]))
    assert sorted(p.price for p in got) == [7, 8]
    assert all(p.stock == 0 for p in got)  # not fetched: the attribute's default

    # parallel scan: two segments partition the table
    seg0 = [p.sku for p in Product.scan(segment=0, total_segments=2)]
    seg1 = [p.sku for p in Product.scan(segment=1, total_segments=2)]
    assert not set(seg0) & set(seg1)
    assert sorted(seg0 + seg1) == [f"sku-{i:03d}" for i in range(60)]
    four = [sorted(p.sku for p in Product.scan(segment=s, total_segments=4, page_size=7)) for s in range(4)]
    assert sorted(sku for seg in four for sku in seg) == [f"sku-{i:03d}" for i in range(60)]

    assert sorted(p.price for p in Product.scan(Product.stock == 3)) == list(range(3, 60, 4))
    assert sorted(p.price for p in Product.scan((Product.price < 10) & (Product.stock > 1))) == [2, 3, 6, 7]

    # limit + last_evaluated_key on a scan
    first = Product.scan(limit=25)
    first_skus = [p.sku for p in first]
    assert len(first_skus) == 25
    assert first.last_evaluated_key == {"sku": {"S": first_skus[-1]}}
    rest = [p.sku for p in Product.scan(last_evaluated_key=first.last_evaluated_key)]
    assert len(rest) == 35
    assert sorted(first_skus + rest) == [f"sku-{i:03d}" for i in range(60)]

    # batch deletes and mixed batches
    with Product.batch_write() as batch:
        for i in range(0, 60, 3):
            batch.delete(Product(f"sku-{i:03d}"))
        batch.save(Product("sku-new", price=1000))
    remaining = sorted(p.sku for p in Product.scan())
    assert remaining == sorted([f"sku-{i:03d}" for i in range(60) if i % 3] + ["sku-new"])
    assert len(remaining) == 41


# --- transactions --------------------------------------------------------------


def test_transact_write_and_transact_get(models):
    Order, Product, connection = models.Order, models.Product, models.connection
    Product("p1", price=10, stock=5).save()
    Product("p2", price=20, stock=1).save()
    Order("c1", "t0", status="open", total=1, placed_at="2026-01-01").save()

    with TransactWrite(connection=connection) as tw:
        tw.save(Order("c1", "t1", status="open", total=30, placed_at="2026-04-01", region="eu"))
        tw.update(Product.get("p1"), actions=[Product.stock.add(-2)], condition=Product.stock >= 2)
        tw.delete(Order.get("c1", "t0"))
        tw.condition_check(Product, "p2", condition=Product.price == 20)

    with TransactGet(connection=connection) as tg:
        f_order = tg.get(Order, "c1", "t1")
        f_p1 = tg.get(Product, "p1")
        f_gone = tg.get(Order, "c1", "t0")
    assert (f_order.get().status, f_order.get().total, f_order.get().version) == ("open", 30, 1)
    assert f_p1.get().stock == 3
    with pytest.raises(Order.DoesNotExist):
        f_gone.get()
    # the new order is in its indexes
    assert keys(Order.by_region.query("eu")) == [("c1", "t1")]
    assert [o.order_id for o in Order.by_status.query("open")] == ["t1"]

    # a failing condition cancels the whole transaction
    with pytest.raises(TransactWriteError) as err:
        with TransactWrite(connection=connection) as tw:
            tw.save(Order("c1", "t2", status="open", total=5, placed_at="2026-04-02"))
            tw.update(Product.get("p2"), actions=[Product.stock.add(-2)], condition=Product.stock >= 2)
    assert err.value.cause_response_code == "TransactionCanceledException"
    assert [r.code if r else None for r in err.value.cancellation_reasons] == [None, "ConditionalCheckFailed"]
    assert err.value.cause_response_message == (
        "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]"
    )
    with pytest.raises(Order.DoesNotExist):
        Order.get("c1", "t2")
    assert Product.get("p2").stock == 1

    # a stale version fails its transaction too
    stale = Order.get("c1", "t1")
    Order.get("c1", "t1").update(actions=[Order.status.set("shipped")])
    with pytest.raises(TransactWriteError) as err:
        with TransactWrite(connection=connection) as tw:
            tw.update(stale, actions=[Order.note.set("x")])
    assert [r.code if r else None for r in err.value.cancellation_reasons] == ["ConditionalCheckFailed"]
    fresh = Order.get("c1", "t1")
    assert (fresh.status, fresh.note, fresh.version) == ("shipped", None, 2)


# --- index read rules and table lifecycle -------------------------------------------


def test_consistent_reads_on_indexes(models):
    Order, ByPlaced = models.Order, models.ByPlaced
    seed_orders(Order)
    # an LSI shares the table's partition: strongly consistent reads are allowed
    assert [o.order_id for o in Order.by_placed.query("c2", ByPlaced.placed_at > "2026-01-01", consistent_read=True)] == [
        "o1",
        "o2",
    ]
    assert [o.order_id for o in Order.query("c2", consistent_read=True)] == ["o1", "o2"]
    # a GSI is eventually consistent only
    with pytest.raises(QueryError) as err:
        list(Order.by_status.query("open", consistent_read=True))
    assert err.value.cause_response_code == "ValidationException"
    assert err.value.cause_response_message == "Consistent reads are not supported on global secondary indexes"
    with pytest.raises(ScanError) as err:
        list(Order.by_region.scan(consistent_read=True))
    assert err.value.cause_response_code == "ValidationException"
    assert err.value.cause_response_message == "Consistent reads are not supported on global secondary indexes"


def test_delete_table(models):
    Product = models.Product
    Product("p1", price=1).save()
    assert Product.exists() is True
    Product.delete_table(wait=True)
    assert Product.exists() is False
    with pytest.raises(TableDoesNotExist):
        Product.describe_table()
    # the ORM can create it again, empty
    Product.create_table(wait=True)
    assert list(Product.scan()) == []


# --- attribute types, nested updates, polymorphism --------------------------------------


def test_attribute_types_round_trip_and_nested_updates(more_models):
    Profile, Address = more_models.Profile, more_models.Address
    joined = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)
    Profile(
        "u1",
        address=Address(city="Oslo"),
        avatar=b"\x00\xffpng",
        keys={b"k1", b"\x00"},
        active=True,
        settings={"theme": "dark", "sizes": [1, 2.5], "beta": None},
        joined=joined,
        scores={1, 2.5, -3},
        history=["a", 1, {"k": "v"}, [True]],
    ).save()
    got = Profile.get("u1")
    assert got.address.as_dict() == {"city": "Oslo"}
    assert got.avatar == b"\x00\xffpng"
    assert got.keys == {b"k1", b"\x00"}
    assert got.active is True
    assert got.settings == {"theme": "dark", "sizes": [1, 2.5], "beta": None}
    assert got.joined == joined
    assert got.scores == {1, 2.5, -3}
    assert got.history == ["a", 1, {"k": "v"}, [True]]
    assert got.logins is None

    got.update(
        actions=[
            Profile.address.city.set("Bergen"),
            Profile.address.zip.set("5003"),
            Profile.history[0].remove(),
            Profile.logins.set(Profile.logins | 10),  # if_not_exists
            Profile.active.set(False),
            Profile.keys.delete({b"\x00"}),
        ]
    )
    got.update(actions=[Profile.logins.set(Profile.logins | 99)], condition=Profile.address.city == "Bergen")  # exists: kept
    got.update(actions=[Profile.logins.add(1)])
    got = Profile.get("u1")
    assert got.address.as_dict() == {"city": "Bergen", "zip": "5003"}
    assert got.history == [1, {"k": "v"}, [True]]
    assert got.logins == 11
    assert got.active is False
    assert got.keys == {b"k1"}

    # conditions on nested paths and on types
    with pytest.raises(UpdateError) as err:
        got.update(actions=[Profile.logins.add(1)], condition=Profile.address.zip.startswith("6"))
    assert err.value.cause_response_code == "ConditionalCheckFailedException"
    got.update(actions=[Profile.logins.add(1)], condition=Profile.address.zip.startswith("5"))
    assert Profile.get("u1").logins == 12
    assert [p.user for p in Profile.scan(Profile.address.city == "Bergen")] == ["u1"]
    assert [p.user for p in Profile.scan(Profile.scores.contains(2.5) & (Profile.history[0] == 1))] == ["u1"]
    assert list(Profile.scan(Profile.address.zip.does_not_exist())) == []


def test_polymorphic_models_share_a_table_and_an_index(more_models):
    Entry, Note, Photo = more_models.Entry, more_models.Note, more_models.Photo
    Note("u1", "2026-01-01", text="hello", owner="ann").save()
    Photo("u1", "2026-01-02", url="a.png", size=10, owner="bob").save()
    Note("u1", "2026-01-03", text="again", owner="ann").save()
    Photo("u2", "2026-01-04", url="b.png", size=20, owner="ann").save()

    mixed = list(Entry.query("u1"))
    assert [(type(e).__name__, e.sk) for e in mixed] == [("Note", "2026-01-01"), ("Photo", "2026-01-02"), ("Note", "2026-01-03")]
    assert [n.text for n in Note.query("u1")] == ["hello", "again"]
    assert [p.url for p in Photo.query("u1")] == ["a.png"]
    assert Note.count("u1") == 2
    assert Entry.count("u1") == 3

    # the GSI holds every kind; a subclass query filters on the discriminator
    anns = list(Entry.by_owner.query("ann"))
    assert [(type(e).__name__, e.pk, e.sk) for e in anns] == [
        ("Note", "u1", "2026-01-01"),
        ("Note", "u1", "2026-01-03"),
        ("Photo", "u2", "2026-01-04"),
    ]
    assert [p.size for p in Photo.by_owner.query("ann")] == [20]
    assert [n.sk for n in Note.by_owner.query("ann", Entry.sk > "2026-01-01")] == ["2026-01-03"]
    assert sorted(type(e).__name__ for e in Entry.scan()) == ["Note", "Note", "Photo", "Photo"]
    assert sorted(p.url for p in Photo.scan()) == ["a.png", "b.png"]

    photo = Photo.get("u1", "2026-01-02")
    assert isinstance(photo, Photo)
    assert Entry.get("u2", "2026-01-04").url == "b.png"


def test_scan_and_query_counts(models):
    Product = models.Product
    with Product.batch_write() as batch:
        for i in range(60):
            batch.save(Product(f"sku-{i:03d}", price=i, stock=i % 4))
    it = Product.scan(Product.stock == 1, page_size=25)
    assert sorted(p.price for p in it) == list(range(1, 60, 4))
    # ScannedCount counts items read before the filter, Count those after
    assert it.total_count == 15
    assert it.page_iter.total_scanned_count == 60
    # a rate-limited scan reads ConsumedCapacity from every page
    limited = Product.scan(rate_limit=1000, page_size=30)
    assert len(list(limited)) == 60
    assert limited.page_iter.total_scanned_count == 60


def test_filter_on_a_key_attribute_of_the_queried_table_or_index_is_refused(models):
    """DynamoDB refuses a Query whose FilterExpression names a key attribute of
    the table or index being queried (reference S53); PynamoDB surfaces it as
    QueryError. Scans have no such rule."""
    Order = models.Order
    seed_orders(Order)
    cases = [
        (lambda: list(Order.query("c1", filter_condition=Order.order_id == "o1")), "order_id"),
        (lambda: list(Order.query("c1", filter_condition=Order.customer == "c1")), "customer"),
        (lambda: list(Order.by_status.query("open", filter_condition=Order.total > 5)), "total"),
        (lambda: list(Order.by_status.query("open", filter_condition=Order.status == "open")), "status"),
        (lambda: list(Order.by_placed.query("c1", filter_condition=Order.placed_at > "2026")), "placed_at"),
        (lambda: Order.count("c1", filter_condition=Order.order_id == "o1"), "order_id"),
    ]
    for run, attr in cases:
        with pytest.raises(QueryError) as err:
            run()
        assert err.value.cause_response_code == "ValidationException"
        assert err.value.cause_response_message == (
            f"Filter Expression can only contain non-primary key attributes: Primary key attribute: {attr}"
        )
    # the same filters are fine on a scan
    assert sorted(keys(Order.scan(Order.order_id == "o1"))) == [("c1", "o1"), ("c2", "o1")]
    # and a filter on the table key is fine when querying a GSI that does not key on it
    assert [o.total for o in Order.by_status.query("open", filter_condition=Order.customer == "c1")] == [30, 75]


def test_lsi_query_fetches_non_projected_attributes_from_the_table(models):
    """An LSI query that names attributes the index does not project fetches
    them from the table (botocore QueryInput.Select doc; reference S49)."""
    Order, ByPlaced = models.Order, models.ByPlaced
    seed_orders(Order)
    results = list(Order.by_placed.query("c2", attributes_to_get=["status", "total"]))
    assert [(o.status, o.total) for o in results] == [("open", 50), ("shipped", 200)]
    results = list(Order.by_placed.query("c1", ByPlaced.placed_at >= "2026-01-05", attributes_to_get=["note", "order_id"]))
    assert [(o.order_id, o.note) for o in results] == [("o1", "leave at door"), ("o3", None)]


def test_gsi_query_cannot_ask_for_non_projected_attributes(models):
    """A GSI cannot fetch from the table: naming an attribute it does not
    project is a ValidationException (botocore QueryInput.Select doc;
    reference S50, whose exact text is unconfirmed: only "project" is asserted)."""
    Order = models.Order
    seed_orders(Order)
    with pytest.raises(QueryError) as err:
        list(Order.by_status.query("open", attributes_to_get=["placed_at", "total"]))
    assert err.value.cause_response_code == "ValidationException"
    assert "project" in err.value.cause_response_message
    # projected attributes are fine
    assert [(o.total, o.note) for o in Order.by_status.query("open", attributes_to_get=["total", "note"])] == [
        (30, "leave at door"),
        (50, None),
        (75, None),
    ]


def test_model_with_a_ttl_attribute_creates_its_table(endpoint):
    """PynamoDB's create_table enables TTL (UpdateTimeToLive) for a model with a
    TTLAttribute; the item's expiry is stored as epoch seconds (reference S117, S119)."""
    from datetime import timedelta

    import boto3
    from pynamodb.attributes import TTLAttribute

    from conftest import boto_args

    class Session(Model):
        Meta = table_meta(endpoint, "pynamodb-session")
        token = UnicodeAttribute(hash_key=True)
        expires = TTLAttribute()

    Session.create_table(wait=True)
    try:
        ttl = boto3.client("dynamodb", **boto_args(endpoint)).describe_time_to_live(TableName=Session.Meta.table_name)
        assert ttl["TimeToLiveDescription"]["AttributeName"] == "expires"
        Session("t1", expires=timedelta(hours=1)).save()
        assert Session.get("t1").expires > datetime.now(timezone.utc)
    finally:
        Session.delete_table()
