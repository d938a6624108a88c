// ElectroDB (the Node DynamoDB ORM) against the server, used the way its
// users use it: three entities in one single-table design (table index
// pk/sk, GSIs gsi1..gsi3 with gsi1pk/gsi1sk-style string keys, and a
// multi-attribute GSI mapped by ElectroDB's `type: "composite"` index), a
// Service with collections across entities, put/create/patch/update/delete,
// batches, queries with sort-key operators and `where` filters, cursors,
// scans and transactions.
//
// ElectroDB does not create tables (its docs: "ElectroDB does not create or
// alter DynamoDB tables"), so `tableFor` derives the CreateTable request from
// the entities' own index definitions, as an application's start-up would.
// Every test gets its own table. EDB_LOG=1 prints every request ElectroDB
// sends and every response it gets.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, test } from "node:test";

import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { Entity, Service } from "electrodb";

import { tableName, useServer, waitActive } from "./lib/server.js";

const require = createRequire(import.meta.url);
const ELECTRODB_VERSION = require("electrodb/package.json").version;

const ctx = useServer();

const SERVICE = "taskapp";

/**
 * An ElectroDB index whose key fields are `${prefix}pk` and `${prefix}sk`
 * (prefix "" for the table index), composed of these attributes.
 */
const keyFields = (prefix, pkComposite, skComposite, extra = {}) => ({
  ...extra,
  pk: { field: `${prefix}pk`, composite: pkComposite },
  sk: { field: `${prefix}sk`, composite: skComposite },
});

/** GSI number n: fields gsi{n}pk / gsi{n}sk, physical index "gsi{n}pk-gsi{n}sk-index". */
const gsi = (n, pkComposite, skComposite, extra = {}) =>
  keyFields(`gsi${n}`, pkComposite, skComposite, { index: `gsi${n}pk-gsi${n}sk-index`, ...extra });

/** An entity's ElectroDB model block in this service. */
const model = (entity) => ({ entity, version: "1", service: SERVICE });

/** ElectroDB attributes: each name a string the entity must have. */
const requiredStrings = (...names) => Object.fromEntries(names.map((name) => [name, { type: "string", required: true }]));

const employeeSchema = {
  model: model("employee"),
  attributes: {
    employee: { type: "string" },
    ...requiredStrings("firstName", "lastName", "office", "title", "team", "dateHired"),
    salary: { type: "number" },
    skills: { type: "set", items: "string" },
  },
  indexes: {
    employee: keyFields("", ["employee"], []),
    coworkers: gsi(1, ["office"], ["team", "title", "employee"], { collection: "workplaces" }),
    teams: gsi(2, ["team"], ["dateHired", "title"]),
    assignments: gsi(3, ["employee"], [], { collection: "assignments" }),
    // an INCLUDE index: only these attributes (and the keys) are projected
    payroll: keyFields("gsi4", ["office"], ["salary"], { index: "payroll", projection: ["firstName", "salary"] }),
  },
};

const taskSchema = {
  model: model("task"),
  attributes: {
    task: { type: "string" },
    ...requiredStrings("project", "employee"),
    description: { type: "string" },
    status: { type: ["open", "in-progress", "closed"], default: "open" },
    points: { type: "number", required: true },
    tags: { type: "set", items: "string" },
    comments: { type: "list", items: { type: "string" } },
  },
  indexes: {
    task: keyFields("", ["task"], ["project", "employee"]),
    project: gsi(2, ["project"], ["employee", "status"]),
    assigned: gsi(3, ["employee"], ["project", "status"], { collection: "assignments" }),
    // a KEYS_ONLY index
    statusKeys: keyFields("gsi5", ["status"], ["task"], { index: "status-keys", projection: "keys_only" }),
    // DynamoDB multi-attribute GSI keys: HASH (project, status), RANGE (points, task)
    backlog: {
      index: "backlog",
      type: "composite",
      pk: { composite: ["project", "status"] },
      sk: { composite: ["points", "task"] },
    },
  },
};

const officeSchema = {
  model: model("office"),
  attributes: { office: { type: "string" }, ...requiredStrings("country", "state", "city", "zip") },
  indexes: {
    locations: keyFields("", ["country", "state"], ["city", "zip", "office"]),
    office: gsi(1, ["office"], [], { collection: "workplaces" }),
  },
};

const SCHEMAS = [employeeSchema, taskSchema, officeSchema];

/**
 * The CreateTable request for these entities: the table index's fields, one
 * GSI per named index (string key fields, or for a `type: "composite"` index
 * one key element per composite attribute with that attribute's type), with
 * the index's `projection` (none: ALL; "keys_only"; a list: INCLUDE).
 */
function createTableInput(TableName, schemas) {
  const types = new Map();
  const define = (name, type) => {
    assert.ok(!types.has(name) || types.get(name) === type, `attribute ${name} declared twice with different types`);
    types.set(name, type);
  };
  const gsis = new Map();
  let KeySchema;
  for (const schema of schemas) {
    const attrType = (attr) => (schema.attributes[attr].type === "number" ? "N" : "S");
    for (const index of Object.values(schema.indexes)) {
      let keys;
      if (index.type === "composite") {
        keys = [
          ...index.pk.composite.map((a) => [a, "HASH", attrType(a)]),
          ...index.sk.composite.map((a) => [a, "RANGE", attrType(a)]),
        ];
      } else {
        keys = [[index.pk.field, "HASH", "S"]];
        if (index.sk) keys.push([index.sk.field, "RANGE", "S"]);
      }
      keys.forEach(([name, , type]) => define(name, type));
      const ks = keys.map(([AttributeName, KeyType]) => ({ AttributeName, KeyType }));
      let Projection = { ProjectionType: "ALL" };
      if (index.projection === "keys_only") Projection = { ProjectionType: "KEYS_ONLY" };
      else if (Array.isArray(index.projection)) Projection = { ProjectionType: "INCLUDE", NonKeyAttributes: index.projection };
      if (index.index === undefined) KeySchema = ks;
      else gsis.set(index.index, { IndexName: index.index, KeySchema: ks, Projection });
    }
  }
  return {
    TableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [...types].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType })),
    KeySchema,
    GlobalSecondaryIndexes: [...gsis.values()],
  };
}

/** A fresh table with the entities and their service bound to it. */
async function freshApp() {
  const table = tableName("electrodb");
  await ctx.client.send(new CreateTableCommand(createTableInput(table, SCHEMAS)));
  await waitActive(ctx.client, table);
  const config = { table, client: ctx.doc, ...(process.env.EDB_LOG ? { logger: (e) => console.log(e.type, JSON.stringify(e.params ?? e.results)) } : {}) };
  const employee = new Entity(employeeSchema, config);
  const task = new Entity(taskSchema, config);
  const office = new Entity(officeSchema, config);
  const service = new Service({ employee, task, office }, config);
  return { table, employee, task, office, service };
}

const EMPLOYEES = [
  { employee: "e1", firstName: "Ada", lastName: "Lovelace", office: "london", title: "engineer", team: "core", salary: 100, dateHired: "2020-01-10" },
  { employee: "e2", firstName: "Alan", lastName: "Turing", office: "london", title: "lead", team: "core", salary: 150, dateHired: "2019-05-01" },
  { employee: "e3", firstName: "Grace", lastName: "Hopper", office: "nyc", title: "engineer", team: "infra", salary: 120, dateHired: "2021-03-15" },
  { employee: "e4", firstName: "Edsger", lastName: "Dijkstra", office: "london", title: "engineer", team: "infra", salary: 110, dateHired: "2018-11-20" },
];

const TASKS = [
  { task: "t1", project: "apollo", employee: "e1", points: 3, status: "open", description: "lexer" },
  { task: "t2", project: "apollo", employee: "e1", points: 8, status: "in-progress", description: "parser" },
  { task: "t3", project: "apollo", employee: "e2", points: 5, status: "open", description: "planner" },
  { task: "t4", project: "gemini", employee: "e1", points: 2, status: "closed", description: "docs" },
  { task: "t5", project: "apollo", employee: "e3", points: 13, status: "open", description: "storage" },
  { task: "t6", project: "apollo", employee: "e4", points: 5, status: "open", description: "network" },
];

const OFFICES = [
  { office: "london", country: "uk", state: "eng", city: "london", zip: "ec1" },
  { office: "nyc", country: "us", state: "ny", city: "new york", zip: "10001" },
  { office: "albany", country: "us", state: "ny", city: "albany", zip: "12201" },
];

async function seed(app) {
  const out = await Promise.all([app.employee.put(EMPLOYEES).go(), app.task.put(TASKS).go(), app.office.put(OFFICES).go()]);
  for (const { unprocessed } of out) assert.deepEqual(unprocessed, []);
}

const byId = (key) => (a, b) => (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0);
const ids = (items, key) => items.map((i) => i[key]);

describe(`electrodb ${ELECTRODB_VERSION}`, () => {
  test("the table is made from the entities' index definitions, with a multi-attribute GSI", async () => {
    const { table } = await freshApp();
    const { Table } = await ctx.client.send(new DescribeTableCommand({ TableName: table }));
    assert.equal(Table.TableStatus, "ACTIVE");
    assert.deepEqual(Table.KeySchema, [
      { AttributeName: "pk", KeyType: "HASH" },
      { AttributeName: "sk", KeyType: "RANGE" },
    ]);
    const gsis = Object.fromEntries(Table.GlobalSecondaryIndexes.map((g) => [g.IndexName, g]));
    assert.deepEqual(Object.keys(gsis).sort(), [
      "backlog",
      "gsi1pk-gsi1sk-index",
      "gsi2pk-gsi2sk-index",
      "gsi3pk-gsi3sk-index",
      "payroll",
      "status-keys",
    ]);
    assert.deepEqual(gsis.payroll.Projection, { ProjectionType: "INCLUDE", NonKeyAttributes: ["firstName", "salary"] });
    assert.deepEqual(gsis["status-keys"].Projection, { ProjectionType: "KEYS_ONLY" });
    assert.deepEqual(gsis.backlog.Projection, { ProjectionType: "ALL" });
    assert.deepEqual(gsis.backlog.KeySchema, [
      { AttributeName: "project", KeyType: "HASH" },
      { AttributeName: "status", KeyType: "HASH" },
      { AttributeName: "points", KeyType: "RANGE" },
      { AttributeName: "task", KeyType: "RANGE" },
    ]);
    assert.deepEqual(gsis["gsi1pk-gsi1sk-index"].KeySchema, [
      { AttributeName: "gsi1pk", KeyType: "HASH" },
      { AttributeName: "gsi1sk", KeyType: "RANGE" },
    ]);
    assert.equal(gsis.backlog.IndexStatus, "ACTIVE");
    assert.deepEqual(
      Table.AttributeDefinitions.map((d) => `${d.AttributeName}:${d.AttributeType}`).sort(),
      [
        "gsi1pk:S",
        "gsi1sk:S",
        "gsi2pk:S",
        "gsi2sk:S",
        "gsi3pk:S",
        "gsi3sk:S",
        "gsi4pk:S",
        "gsi4sk:S",
        "gsi5pk:S",
        "gsi5sk:S",
        "pk:S",
        "points:N",
        "project:S",
        "sk:S",
        "status:S",
        "task:S",
      ],
    );
    await ctx.client.send(new DeleteTableCommand({ TableName: table }));
  });

  test("put and get: the stored item carries ElectroDB's composed keys; get returns the entity's attributes", async () => {
    const app = await freshApp();
    await app.employee.put(EMPLOYEES[0]).go();
    const { data } = await app.employee.get({ employee: "e1" }).go();
    assert.deepEqual(data, { ...EMPLOYEES[0] });

    const raw = await app.employee.get({ employee: "e1" }).go({ data: "raw" });
    assert.deepEqual(raw.data.Item, {
      ...EMPLOYEES[0],
      pk: "$taskapp#employee_e1",
      sk: "$employee_1",
      gsi1pk: "$taskapp#office_london",
      gsi1sk: "$workplaces#employee_1#team_core#title_engineer#employee_e1",
      gsi2pk: "$taskapp#team_core",
      gsi2sk: "$employee_1#datehired_2020-01-10#title_engineer",
      gsi3pk: "$taskapp#employee_e1",
      gsi3sk: "$assignments#employee_1",
      gsi4pk: "$taskapp#office_london",
      gsi4sk: "$employee_1#salary_100",
      __edb_e__: "employee",
      __edb_v__: "1",
    });

    assert.deepEqual(await app.employee.get({ employee: "nobody" }).go(), { data: null });
    // attributes: a projection of the returned fields
    const { data: some } = await app.employee.get({ employee: "e1" }).go({ attributes: ["firstName", "salary"] });
    assert.deepEqual(some, { firstName: "Ada", salary: 100 });
  });

  test("create refuses an existing item (its condition), put overwrites", async () => {
    const app = await freshApp();
    const created = await app.task.create(TASKS[0]).go();
    assert.deepEqual(created.data, { ...TASKS[0] });

    const err = await app.task.create({ ...TASKS[0], points: 99 }).go().then(
      () => assert.fail("create of an existing item must fail"),
      (e) => e,
    );
    assert.equal(err.name, "ElectroError");
    assert.equal(err.code, 4001);
    assert.equal(
      err.message,
      'Error thrown by DynamoDB client: "The conditional request failed" - For more detail on this error reference: https://electrodb.dev/en/reference/errors/#aws-error',
    );
    assert.equal(err.cause.name, "ConditionalCheckFailedException");
    assert.equal((await app.task.get({ task: "t1", project: "apollo", employee: "e1" }).go()).data.points, 3);

    await app.task.put({ ...TASKS[0], points: 99, status: "closed" }).go();
    const { data } = await app.task.get({ task: "t1", project: "apollo", employee: "e1" }).go();
    assert.deepEqual(data, { ...TASKS[0], points: 99, status: "closed" });
  });

  test("update and patch: set, add, subtract, remove, append, delete from a set; patch needs the item", async () => {
    const app = await freshApp();
    await app.task.put({ ...TASKS[1], tags: ["a", "b", "c"], comments: ["first"] }).go();
    const key = { task: "t2", project: "apollo", employee: "e1" };

    const { data } = await app.task
      .update(key)
      .set({ description: "parser v2" })
      .add({ points: 2, tags: ["d"] })
      .append({ comments: ["second", "third"] })
      .go({ response: "all_new" });
    assert.deepEqual(data, {
      ...TASKS[1],
      description: "parser v2",
      points: 10,
      tags: ["a", "b", "c", "d"],
      comments: ["first", "second", "third"],
    });
    // ADD and DELETE of one attribute in one update: overlapping paths, refused by DynamoDB
    const overlap = await app.task
      .update(key)
      .add({ tags: ["e"] })
      .delete({ tags: ["a"] })
      .go()
      .then(
        () => assert.fail("overlapping paths must be refused"),
        (e) => e,
      );
    assert.equal(overlap.cause.name, "ValidationException");
    assert.equal(
      overlap.cause.message,
      "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [tags], path two: [tags]",
    );
    // UPDATED_NEW: tags and the key attributes ElectroDB sets on every update
    const { data: deleted } = await app.task.update(key).delete({ tags: ["a"] }).go({ response: "updated_new" });
    assert.deepEqual(deleted, { ...key, tags: ["b", "c", "d"] });

    const patched = await app.task
      .patch(key)
      .subtract({ points: 4 })
      .remove(["description"])
      .set({ status: "closed" })
      .go({ response: "updated_new" });
    assert.deepEqual(patched.data, { ...key, points: 6, status: "closed" });
    const { data: after } = await app.task.get(key).go();
    assert.deepEqual(after, {
      task: "t2",
      project: "apollo",
      employee: "e1",
      points: 6,
      status: "closed",
      tags: ["b", "c", "d"],
      comments: ["first", "second", "third"],
    });
    // the index keys built from updated composite attributes moved with it
    const { data: closed } = await app.task.query.backlog({ project: "apollo", status: "closed" }).go();
    assert.deepEqual(ids(closed, "task"), ["t2"]);
    const { data: viaProject } = await app.task.query.project({ project: "apollo" }).begins({ employee: "e1" }).go();
    assert.deepEqual(viaProject.map((t) => [t.task, t.status]), [["t2", "closed"]]);

    // patch of a missing item fails on its attribute_exists condition; update creates it
    const err = await app.task
      .patch({ task: "zz", project: "apollo", employee: "e9" })
      .set({ points: 1 })
      .go()
      .then(
        () => assert.fail("patch of a missing item must fail"),
        (e) => e,
      );
    assert.equal(err.cause.name, "ConditionalCheckFailedException");
    assert.equal((await app.task.get({ task: "zz", project: "apollo", employee: "e9" }).go()).data, null);

    // update with a where condition
    const cond = await app.task
      .update(key)
      .set({ points: 1 })
      .where(({ status }, { eq }) => eq(status, "open"))
      .go()
      .then(
        () => assert.fail("condition must fail"),
        (e) => e,
      );
    assert.equal(cond.cause.name, "ConditionalCheckFailedException");
    await app.task
      .update(key)
      .set({ points: 1 })
      .where(({ status }, { eq }) => eq(status, "closed"))
      .go();
    assert.equal((await app.task.get(key).go()).data.points, 1);
  });

  test("upsert, the data() update DSL, and put with a where condition", async () => {
    const app = await freshApp();
    const key = { task: "u1", project: "apollo", employee: "e1" };

    // upsert creates the item, then updates it; ifNotExists keeps a first value
    await app.task.upsert({ ...key, points: 3, description: "first" }).go();
    assert.deepEqual((await app.task.get(key).go()).data, { ...key, points: 3, description: "first", status: "open" });
    await app.task
      .upsert({ ...key, points: 5 })
      .ifNotExists({ description: "ignored" })
      .add({ tags: ["x"] })
      .go();
    assert.deepEqual((await app.task.get(key).go()).data, { ...key, points: 5, description: "first", status: "open", tags: ["x"] });

    // data(): the same operations written as a callback
    await app.task
      .update(key)
      .data(({ points, comments, description, tags }, { add, set, append, remove, del }) => {
        add(points, 10);
        set(comments, []);
        append(comments, ["c1"]);
        remove(description);
        del(tags, ["x"]);
      })
      .go()
      .then(
        () => assert.fail("SET and list_append of one path overlap"),
        (e) => assert.equal(e.cause.name, "ValidationException"),
      );
    await app.task
      .update(key)
      .data(({ points, comments, description, tags }, { add, append, remove, del }) => {
        add(points, 10);
        append(comments, ["c1"]);
        remove(description);
        del(tags, ["x"]);
      })
      .go();
    assert.deepEqual((await app.task.get(key).go()).data, { ...key, points: 15, status: "open", comments: ["c1"] });

    // put with a where condition
    await app.task
      .put({ ...key, points: 1 })
      .where(({ points }, { gt }) => gt(points, 100))
      .go()
      .then(
        () => assert.fail("the condition must fail"),
        (e) => assert.equal(e.cause.name, "ConditionalCheckFailedException"),
      );
    await app.task
      .put({ ...key, points: 1 })
      .where(({ points }, { eq }) => eq(points, 15))
      .go();
    assert.deepEqual((await app.task.get(key).go()).data, { ...key, points: 1, status: "open" });
  });

  test("delete and remove: delete returns the old item on request, remove needs the item", async () => {
    const app = await freshApp();
    await seed(app);
    const { data } = await app.employee.delete({ employee: "e4" }).go({ response: "all_old" });
    assert.deepEqual(data, EMPLOYEES[3]);
    assert.equal((await app.employee.get({ employee: "e4" }).go()).data, null);
    // delete of a missing item succeeds (nothing old to return); remove (delete + attribute_exists) does not
    assert.deepEqual(await app.employee.delete({ employee: "e4" }).go({ response: "all_old" }), { data: null });
    // without a response option ElectroDB answers with the key it deleted
    assert.deepEqual(await app.employee.delete({ employee: "e4" }).go(), { data: { employee: "e4" } });
    const err = await app.employee
      .remove({ employee: "e4" })
      .go()
      .then(
        () => assert.fail("remove of a missing item must fail"),
        (e) => e,
      );
    assert.equal(err.cause.name, "ConditionalCheckFailedException");
    // the deleted item left its indexes
    const { data: infra } = await app.employee.query.teams({ team: "infra" }).go();
    assert.deepEqual(ids(infra, "employee"), ["e3"]);
  });

  test("batchWrite and batchGet across more items than one request takes", async () => {
    const app = await freshApp();
    const many = Array.from({ length: 60 }, (_, i) => ({
      task: `b${String(i).padStart(2, "0")}`,
      project: i % 2 ? "odd" : "even",
      employee: "e1",
      points: i,
    }));
    const { unprocessed } = await app.task.put(many).go();
    assert.deepEqual(unprocessed, []);

    const keys = many.map(({ task, project, employee }) => ({ task, project, employee }));
    const missing = Array.from({ length: 50 }, (_, i) => ({ task: `none${i}`, project: "x", employee: "e1" }));
    const got = await app.task.get([...keys, ...missing]).go();
    assert.deepEqual(got.unprocessed, []);
    assert.equal(got.data.length, 60);
    assert.deepEqual(got.data.sort(byId("task")), many.map((t) => ({ ...t, status: "open" })));

    const del = await app.task.delete(keys.filter((_, i) => i % 3 === 0)).go();
    assert.deepEqual(del.unprocessed, []);
    const left = await app.task.get(keys).go();
    assert.equal(left.data.length, 40);
    assert.deepEqual(ids(left.data.sort(byId("task")), "task"), ids(many.filter((_, i) => i % 3 !== 0), "task"));
  });

  test("query with sort-key operators: begins, between, gt, gte, lt, lte and descending order", async () => {
    const app = await freshApp();
    await seed(app);

    // gsi1sk is team, title, employee
    const london = await app.employee.query.coworkers({ office: "london" }).go();
    assert.deepEqual(ids(london.data, "employee"), ["e1", "e2", "e4"]);
    assert.deepEqual(london.cursor, null);
    const core = await app.employee.query.coworkers({ office: "london", team: "core" }).go();
    assert.deepEqual(ids(core.data, "employee"), ["e1", "e2"]);
    const leads = await app.employee.query.coworkers({ office: "london" }).begins({ team: "core", title: "le" }).go();
    assert.deepEqual(ids(leads.data, "employee"), ["e2"]);
    const desc = await app.employee.query.coworkers({ office: "london" }).go({ order: "desc" });
    assert.deepEqual(ids(desc.data, "employee"), ["e4", "e2", "e1"]);

    // gsi2sk for employees is dateHired, title
    const hired = await app.employee.query
      .teams({ team: "infra" })
      .between({ dateHired: "2018-01-01" }, { dateHired: "2020-12-31" })
      .go();
    assert.deepEqual(ids(hired.data, "employee"), ["e4"]);
    const after = await app.employee.query.teams({ team: "core" }).gt({ dateHired: "2019-12-31" }).go();
    assert.deepEqual(ids(after.data, "employee"), ["e1"]);
    // gt compares the composed key: "…#datehired_2019-05-01#title_lead" is greater than "…#datehired_2019-05-01"
    const afterPrefix = await app.employee.query.teams({ team: "core" }).gt({ dateHired: "2019-05-01" }).go();
    assert.deepEqual(ids(afterPrefix.data, "employee"), ["e2", "e1"]);
    const from = await app.employee.query.teams({ team: "core" }).gte({ dateHired: "2019-05-01" }).go();
    assert.deepEqual(ids(from.data, "employee"), ["e2", "e1"]);
    const before = await app.employee.query.teams({ team: "infra" }).lt({ dateHired: "2021" }).go();
    assert.deepEqual(ids(before.data, "employee"), ["e4"]);
    const upTo = await app.employee.query.teams({ team: "infra" }).lte({ dateHired: "2021-03-15", title: "engineer" }).go();
    assert.deepEqual(ids(upTo.data, "employee"), ["e4", "e3"]);
    // with the date alone the composed key "…#datehired_2021-03-15#title_engineer" is past the bound
    const upToDate = await app.employee.query.teams({ team: "infra" }).lte({ dateHired: "2021-03-15" }).go();
    assert.deepEqual(ids(upToDate.data, "employee"), ["e4"]);

    // table index with a partial sort key (project, employee)
    const t1 = await app.task.query.task({ task: "t1" }).go();
    assert.deepEqual(t1.data, [TASKS[0]]);
    const t1p = await app.task.query.task({ task: "t1", project: "apollo" }).go();
    assert.deepEqual(ids(t1p.data, "task"), ["t1"]);
    const t1none = await app.task.query.task({ task: "t1", project: "gemini" }).go();
    assert.deepEqual(t1none.data, []);

    // project index: employee, status
    const apollo = await app.task.query.project({ project: "apollo" }).go();
    assert.deepEqual(ids(apollo.data, "task"), ["t2", "t1", "t3", "t5", "t6"]); // e1/in-progress < e1/open
    const e1open = await app.task.query.project({ project: "apollo", employee: "e1", status: "open" }).go();
    assert.deepEqual(ids(e1open.data, "task"), ["t1"]);
    const laterEmployees = await app.task.query.project({ project: "apollo" }).gt({ employee: "e2", status: "open" }).go();
    assert.deepEqual(ids(laterEmployees.data, "task"), ["t5", "t6"]);
  });

  test("where filters on queries", async () => {
    const app = await freshApp();
    await seed(app);
    const big = await app.task.query
      .project({ project: "apollo" })
      .where(({ points }, { gte }) => gte(points, 5))
      .go();
    assert.deepEqual(ids(big.data, "task"), ["t2", "t3", "t5", "t6"]);

    const mixed = await app.task.query
      .project({ project: "apollo" })
      .where(({ points, status }, { between, eq }) => `${between(points, 4, 10)} AND ${eq(status, "open")}`)
      .go();
    assert.deepEqual(ids(mixed.data, "task"), ["t3", "t6"]);

    const words = await app.task.query
      .project({ project: "apollo" })
      .where(({ description }, { begins }) => begins(description, "p"))
      .where(({ employee }, { ne }) => ne(employee, "e2"))
      .go();
    assert.deepEqual(ids(words.data, "task"), ["t2"]);

    const contains = await app.task.query
      .project({ project: "apollo" })
      .where(({ description, points }, { contains, lt }) => `${contains(description, "or")} OR ${lt(points, 4)}`)
      .go();
    assert.deepEqual(ids(contains.data, "task"), ["t1", "t5", "t6"]);

    const none = await app.employee.query
      .coworkers({ office: "london" })
      .where(({ salary }, { gt }) => gt(salary, 1000))
      .go();
    assert.deepEqual(none.data, []);

    const noSalary = await app.employee.query
      .coworkers({ office: "london" })
      .where(({ skills }, { notExists }) => notExists(skills))
      .where(({ salary }, { gt }) => gt(salary, 105))
      .go();
    assert.deepEqual(ids(noSalary.data, "employee"), ["e2", "e4"]);
  });

  test("multi-attribute GSI (type composite): equality on every HASH part, conditions on the RANGE prefix", async () => {
    const app = await freshApp();
    await seed(app);
    const extra = [
      { task: "t7", project: "apollo", employee: "e2", points: 5, status: "open" },
      { task: "t8", project: "apollo", employee: "e3", points: 1, status: "in-progress" },
    ];
    await app.task.put(extra).go();

    // RANGE is (points N, task S): numeric order first, then task
    const open = await app.task.query.backlog({ project: "apollo", status: "open" }).go();
    assert.deepEqual(ids(open.data, "task"), ["t1", "t3", "t6", "t7", "t5"]);
    assert.deepEqual(
      open.data.map((t) => t.points),
      [3, 5, 5, 5, 13],
    );
    const fives = await app.task.query.backlog({ project: "apollo", status: "open", points: 5 }).go();
    assert.deepEqual(ids(fives.data, "task"), ["t3", "t6", "t7"]);
    const fiveAfterT3 = await app.task.query.backlog({ project: "apollo", status: "open", points: 5 }).gt({ task: "t3" }).go();
    assert.deepEqual(ids(fiveAfterT3.data, "task"), ["t6", "t7"]);
    const over4 = await app.task.query.backlog({ project: "apollo", status: "open" }).gt({ points: 4 }).go();
    assert.deepEqual(ids(over4.data, "task"), ["t3", "t6", "t7", "t5"]);
    const between = await app.task.query
      .backlog({ project: "apollo", status: "open" })
      .between({ points: 3 }, { points: 5 })
      .go();
    assert.deepEqual(ids(between.data, "task"), ["t1", "t3", "t6", "t7"]);
    const desc = await app.task.query.backlog({ project: "apollo", status: "open" }).lte({ points: 5 }).go({ order: "desc" });
    assert.deepEqual(ids(desc.data, "task"), ["t7", "t6", "t3", "t1"]);
    const wip = await app.task.query.backlog({ project: "apollo", status: "in-progress" }).go();
    assert.deepEqual(ids(wip.data, "task"), ["t8", "t2"]);
    const gemini = await app.task.query.backlog({ project: "gemini", status: "open" }).go();
    assert.deepEqual(gemini.data, []);
    const filtered = await app.task.query
      .backlog({ project: "apollo", status: "open" })
      .where(({ employee }, { eq }) => eq(employee, "e2"))
      .go();
    assert.deepEqual(ids(filtered.data, "task"), ["t3", "t7"]);

    // paging through the multi-attribute index
    const page1 = await app.task.query.backlog({ project: "apollo", status: "open" }).go({ limit: 2 });
    assert.deepEqual(ids(page1.data, "task"), ["t1", "t3"]);
    assert.equal(typeof page1.cursor, "string");
    const page2 = await app.task.query.backlog({ project: "apollo", status: "open" }).go({ limit: 2, cursor: page1.cursor });
    assert.deepEqual(ids(page2.data, "task"), ["t6", "t7"]);
    const page3 = await app.task.query.backlog({ project: "apollo", status: "open" }).go({ limit: 2, cursor: page2.cursor });
    assert.deepEqual(ids(page3.data, "task"), ["t5"]);
    assert.equal(page3.cursor, null);
  });

  test("INCLUDE and KEYS_ONLY index projections; scanning an index", async () => {
    const app = await freshApp();
    await seed(app);

    // INCLUDE (firstName, salary): the entity identifiers are not projected,
    // so ElectroDB returns what is there without its ownership check
    const payroll = await app.employee.query.payroll({ office: "london" }).go();
    assert.deepEqual(payroll.data, [
      { firstName: "Ada", salary: 100 },
      { firstName: "Edsger", salary: 110 },
      { firstName: "Alan", salary: 150 },
    ]);
    const raw = await app.employee.query.payroll({ office: "london" }).gt({ salary: 105 }).go({ data: "raw" });
    assert.deepEqual(raw.data.Items, [
      { pk: "$taskapp#employee_e4", sk: "$employee_1", gsi4pk: "$taskapp#office_london", gsi4sk: "$employee_1#salary_110", firstName: "Edsger", salary: 110 },
      { pk: "$taskapp#employee_e2", sk: "$employee_1", gsi4pk: "$taskapp#office_london", gsi4sk: "$employee_1#salary_150", firstName: "Alan", salary: 150 },
    ]);

    // KEYS_ONLY: table and index keys only
    const openKeys = await app.task.query.statusKeys({ status: "open" }).go({ data: "raw" });
    assert.deepEqual(
      openKeys.data.Items.map((i) => Object.keys(i).sort()),
      Array.from({ length: 4 }, () => ["gsi5pk", "gsi5sk", "pk", "sk"]),
    );
    assert.deepEqual(
      openKeys.data.Items.map((i) => i.gsi5sk),
      ["$task_1#task_t1", "$task_1#task_t3", "$task_1#task_t5", "$task_1#task_t6"],
    );

    // hydrate: the KEYS_ONLY query's keys are fetched in full (a batch get) from the table
    const hydrated = await app.task.query.statusKeys({ status: "open" }).go({ hydrate: true });
    assert.deepEqual(hydrated.data, [TASKS[0], TASKS[2], TASKS[4], TASKS[5]]);

    // scanning an index: only the items that are in it. (ElectroDB 3.9.3
    // cannot scan a `type: "composite"` index: it sends the filter
    // "begins_with(#, :)" with the name "#", which DynamoDB refuses.)
    const inPayroll = await app.employee.scan.payroll.go({ data: "raw" });
    assert.deepEqual(inPayroll.data.Items.map((i) => i.firstName).sort(), ["Ada", "Alan", "Edsger", "Grace"]);
    const payrollScan = await app.employee.scan.payroll.where(({ salary }, { lt }) => lt(salary, 115)).go();
    assert.deepEqual(payrollScan.data.map((e) => e.salary).sort(), [100, 110]);
    const closedKeys = await app.task.scan.statusKeys.go({ data: "raw" });
    assert.equal(closedKeys.data.Items.length, 6);
  });

  test("match and find: ElectroDB picks an index and filters on the other attributes", async () => {
    const app = await freshApp();
    await seed(app);
    const found = await app.employee.find({ office: "london", team: "core" }).go();
    assert.deepEqual(ids(found.data, "employee"), ["e1", "e2"]);
    const matched = await app.employee.match({ team: "infra", title: "engineer" }).go();
    assert.deepEqual(ids(matched.data, "employee"), ["e4", "e3"]); // the teams index: by dateHired
    const byTask = await app.task.match({ task: "t3", description: "planner" }).go();
    assert.deepEqual(byTask.data, [TASKS[2]]);
    const none = await app.task.match({ task: "t3", description: "lexer" }).go();
    assert.deepEqual(none.data, []);
  });

  test("collections: a service query returns every entity of the collection", async () => {
    const app = await freshApp();
    await seed(app);

    const { data: assignments, cursor } = await app.service.collections.assignments({ employee: "e1" }).go();
    assert.equal(cursor, null);
    assert.deepEqual(Object.keys(assignments).sort(), ["employee", "task"]);
    assert.deepEqual(assignments.employee, [EMPLOYEES[0]]);
    assert.deepEqual(ids(assignments.task, "task"), ["t2", "t1", "t4"]); // apollo/in-progress, apollo/open, gemini/closed

    const filtered = await app.service.collections
      .assignments({ employee: "e1" })
      .where(({ points }, { gt }) => gt(points, 2))
      .go();
    assert.deepEqual(filtered.data.employee, []);
    assert.deepEqual(ids(filtered.data.task, "task"), ["t2", "t1"]);

    const { data: workplaces } = await app.service.collections.workplaces({ office: "london" }).go();
    assert.deepEqual(Object.keys(workplaces).sort(), ["employee", "office"]);
    assert.deepEqual(workplaces.office, [OFFICES[0]]);
    assert.deepEqual(ids(workplaces.employee, "employee"), ["e1", "e2", "e4"]);

    const { data: nyc } = await app.service.collections.workplaces({ office: "nyc" }).go();
    assert.deepEqual(ids(nyc.office, "office"), ["nyc"]);
    assert.deepEqual(ids(nyc.employee, "employee"), ["e3"]);

    // the table index for offices: pk (country, state), sk (city, zip, office)
    const ny = await app.office.query.locations({ country: "us", state: "ny" }).go();
    assert.deepEqual(ids(ny.data, "office"), ["albany", "nyc"]);
    const nyBegins = await app.office.query.locations({ country: "us", state: "ny" }).begins({ city: "new" }).go();
    assert.deepEqual(ids(nyBegins.data, "office"), ["nyc"]);
  });

  test("pagination with limit and cursor, and pages: 'all'", async () => {
    const app = await freshApp();
    const many = Array.from({ length: 23 }, (_, i) => ({
      task: `p${String(i).padStart(2, "0")}`,
      project: "paged",
      employee: `e${String(i).padStart(2, "0")}`,
      points: i,
    }));
    await app.task.put(many).go();

    const seen = [];
    let cursor = null;
    let pages = 0;
    do {
      const page = await app.task.query.project({ project: "paged" }).go({ limit: 5, cursor });
      assert.equal(page.data.length, pages < 4 ? 5 : 3);
      seen.push(...ids(page.data, "task"));
      cursor = page.cursor;
      pages += 1;
    } while (cursor !== null);
    assert.equal(pages, 5);
    assert.deepEqual(seen, ids(many, "task"));

    const all = await app.task.query.project({ project: "paged" }).go({ pages: "all", limit: 4 });
    assert.deepEqual(ids(all.data, "task"), ids(many, "task"));

    const filteredPages = await app.task.query
      .project({ project: "paged" })
      .where(({ points }, { gte }) => gte(points, 20))
      .go({ pages: "all" });
    assert.deepEqual(ids(filteredPages.data, "task"), ["p20", "p21", "p22"]);

    // a collection query pages with a cursor too
    await app.employee.put({ ...EMPLOYEES[0], employee: "e05" }).go();
    const first = await app.service.collections.assignments({ employee: "e05" }).go({ limit: 1 });
    const firstCount = first.data.employee.length + first.data.task.length;
    assert.equal(firstCount, 1);
    assert.notEqual(first.cursor, null);
    const second = await app.service.collections.assignments({ employee: "e05" }).go({ cursor: first.cursor });
    assert.equal(second.data.employee.length + second.data.task.length, 1);
    assert.deepEqual([...first.data.employee, ...second.data.employee].map((e) => e.employee), ["e05"]);
    assert.deepEqual(ids([...first.data.task, ...second.data.task], "task"), ["p05"]);
  });

  test("scan: an entity's items only, with where filters and a cursor", async () => {
    const app = await freshApp();
    await seed(app);

    const tasks = await app.task.scan.go();
    assert.deepEqual(tasks.data.sort(byId("task")), TASKS);
    const employees = await app.employee.scan.go();
    assert.deepEqual(ids(employees.data.sort(byId("employee")), "employee"), ["e1", "e2", "e3", "e4"]);

    const openBig = await app.task.scan
      .where(({ status, points }, { eq, gt }) => `${eq(status, "open")} AND ${gt(points, 4)}`)
      .go();
    assert.deepEqual(ids(openBig.data.sort(byId("task")), "task"), ["t3", "t5", "t6"]);

    // paging a scan: ElectroDB filters to the entity on the server side, so
    // pages can come back short; every task turns up exactly once
    const seen = [];
    let cursor = null;
    let pages = 0;
    do {
      const page = await app.task.scan.go({ limit: 4, cursor });
      seen.push(...ids(page.data, "task"));
      cursor = page.cursor;
      pages += 1;
      assert.ok(pages < 20, "scan paging did not end");
    } while (cursor !== null);
    assert.deepEqual(seen.sort(), ["t1", "t2", "t3", "t4", "t5", "t6"]);

    // another entity's scan on the same table sees only its own items
    const offices = await app.office.scan.where(({ country }, { eq }) => eq(country, "us")).go();
    assert.deepEqual(ids(offices.data.sort(byId("office")), "office"), ["albany", "nyc"]);
  });

  test("transactions: write (put, create, update, patch, delete, check) and get through the service", async () => {
    const app = await freshApp();
    await seed(app);

    const ok = await app.service.transaction
      .write(({ employee, task }) => [
        employee.create({ employee: "e5", firstName: "Barbara", lastName: "Liskov", office: "nyc", title: "lead", team: "infra", dateHired: "2022-02-02" }).commit(),
        task.put({ task: "t9", project: "gemini", employee: "e5", points: 8 }).commit(),
        task.update({ task: "t1", project: "apollo", employee: "e1" }).set({ status: "closed" }).add({ points: 1 }).commit(),
        task.patch({ task: "t3", project: "apollo", employee: "e2" }).append({ comments: ["handed over"] }).commit(),
        task.delete({ task: "t4", project: "gemini", employee: "e1" }).commit(),
        employee.check({ employee: "e2" }).where(({ title }, { eq }) => eq(title, "lead")).commit(),
      ])
      .go();
    assert.equal(ok.canceled, false);
    assert.equal(ok.data.length, 6);
    assert.deepEqual(
      ok.data.map((r) => [r.rejected, r.code]),
      Array.from({ length: 6 }, () => [false, "None"]),
    );

    const got = await app.service.transaction
      .get(({ employee, task }) => [
        employee.get({ employee: "e5" }).commit(),
        task.get({ task: "t1", project: "apollo", employee: "e1" }).commit(),
        task.get({ task: "t3", project: "apollo", employee: "e2" }).commit(),
        task.get({ task: "t4", project: "gemini", employee: "e1" }).commit(),
      ])
      .go();
    assert.equal(got.canceled, false);
    assert.deepEqual(got.data.map((r) => r.item), [
      { employee: "e5", firstName: "Barbara", lastName: "Liskov", office: "nyc", title: "lead", team: "infra", dateHired: "2022-02-02" },
      { ...TASKS[0], status: "closed", points: 4 },
      { ...TASKS[2], comments: ["handed over"] },
      null,
    ]);
    // the new task is in the multi-attribute index, t1 left "open" for "closed"
    const { data: geminiOpen } = await app.task.query.backlog({ project: "gemini", status: "open" }).go();
    assert.deepEqual(ids(geminiOpen, "task"), ["t9"]);
    const { data: apolloOpen } = await app.task.query.backlog({ project: "apollo", status: "open" }).go();
    assert.deepEqual(ids(apolloOpen, "task"), ["t3", "t6", "t5"]);

    // a failing check cancels everything; ElectroDB reports per-item codes
    const failed = await app.service.transaction
      .write(({ employee, task }) => [
        task.put({ task: "t10", project: "gemini", employee: "e5", points: 1 }).commit(),
        employee.create({ ...EMPLOYEES[0] }).commit(),
        employee.check({ employee: "e2" }).where(({ salary }, { gt }) => gt(salary, 500)).commit(),
      ])
      .go();
    assert.equal(failed.canceled, true);
    assert.deepEqual(
      failed.data.map((r) => [r.rejected, r.code, r.message]),
      [
        [false, "None", undefined],
        [true, "ConditionalCheckFailed", "The conditional request failed"],
        [true, "ConditionalCheckFailed", "The conditional request failed"],
      ],
    );
    assert.equal((await app.task.get({ task: "t10", project: "gemini", employee: "e5" }).go()).data, null);

    // with response "all_old" on a failed condition, the current item comes back
    const withOld = await app.service.transaction
      .write(({ task }) => [
        task.patch({ task: "t5", project: "apollo", employee: "e3" }).set({ points: 1 }).where(({ status }, { eq }) => eq(status, "closed")).commit({ response: "all_old" }),
      ])
      .go();
    assert.equal(withOld.canceled, true);
    assert.deepEqual(withOld.data, [
      { rejected: true, code: "ConditionalCheckFailed", message: "The conditional request failed", item: TASKS[4] },
    ]);
  });

  test("a where filter on a component of the queried multi-attribute index is refused", async () => {
    const app = await freshApp();
    await seed(app);
    // points is a RANGE component of the "backlog" index being queried (reference S27, S53)
    const err = await app.task.query
      .backlog({ project: "apollo", status: "open" })
      .where(({ points }, { gt }) => gt(points, 4))
      .go()
      .then(
        () => assert.fail("a filter on an index key component must be refused"),
        (e) => e,
      );
    assert.equal(err.cause.name, "ValidationException");
    assert.equal(err.cause.message, "Filter Expression can only contain non-primary key attributes: Primary key attribute: points");
    // filtering on an attribute outside the index key is allowed
    const { data } = await app.task.query
      .backlog({ project: "apollo", status: "open" })
      .where(({ employee }, { eq }) => eq(employee, "e2"))
      .go();
    assert.deepEqual(ids(data, "task"), ["t3"]);
  });
});
