// The acceptance test of `locum mcp` with the official TypeScript MCP client, over stdio, as a
// host runs it. mcp/client_test.go builds locum, makes a repository and a scripted model
// server, and runs this file with LOCUM_BIN, LOCUM_WORK and LOCUM_BASE_URL set.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ProgressNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const bin = process.env.LOCUM_BIN;
const work = process.env.LOCUM_WORK;
const file = join(work, "calc.go");
const original = readFileSync(join(work, "orig", "calc.go"), "utf8");
const model = "qwen3-coder-30b";

let client;

// connect starts `locum mcp --allow-model` in the repository and connects a client to it.
const connect = async () => {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["mcp", "--allow-model"],
    cwd: work,
    env: { ...process.env },
    stderr: "inherit",
  });
  const c = new Client({ name: "locum-acceptance", version: "1.0.0" });
  await c.connect(transport);
  return c;
};

before(async () => {
  client = await connect();
});

after(async () => {
  await client?.close();
});

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

// git runs git in the repository and returns what it printed.
const git = (...args) => execFileSync("git", ["-C", work, ...args], { encoding: "utf8" });

test("lists the tools the Go test serves, with typed input schemas, and no allow_remote", async () => {
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.deepEqual(Object.keys(byName).sort(), JSON.parse(process.env.LOCUM_TOOLS).sort());
  const transform = byName.transform;
  assert.deepEqual([...transform.inputSchema.required].sort(), ["file", "task", "verify"]);
  for (const arg of ["lines", "model", "role", "base_url", "max_attempts", "effort"]) {
    assert.ok(arg in transform.inputSchema.properties, `transform takes ${arg}`);
  }
  const agent = byName.agent;
  assert.deepEqual([...agent.inputSchema.required].sort(), ["task", "verify"]);
  for (const arg of ["from", "model", "role", "max_turns", "verify_rounds", "stall_turns"]) {
    assert.ok(arg in agent.inputSchema.properties, `agent takes ${arg}`);
  }
  assert.equal(agent.annotations.destructiveHint, false, "the agent writes a branch of its own, never the person's files");
  assert.equal(agent.annotations.readOnlyHint, false);
  assert.match(agent.description, /details\.branch.*locum runs accept RUN_ID/);
  for (const t of tools) {
    assert.ok(t.description.length > 80, `${t.name} tells a host model when to use it`);
    assert.equal(t.outputSchema, undefined, `${t.name}: its structured content stands without a schema`);
    assert.ok(!JSON.stringify(t.inputSchema).includes("allow_remote"), `${t.name} cannot widen the loopback rail`);
  }
});

test("status says the server answers", async () => {
  const res = await client.callTool({ name: "status", arguments: {} });
  assert.equal(res.isError ?? false, false, text(res));
  assert.equal(res.structuredContent.up, true);
  assert.equal(res.structuredContent.server_name, "LM Studio");
});

test("a transform kept, with progress notifications", async () => {
  // The SDK's onprogress loses a notification that arrives in the same read as the response: it
  // hands notifications on a microtask later, and the response drops the call's handler first.
  // With a scripted server that answers at once, on a busy machine, that can be all of them. A
  // handler of the test's own, on a client of its own, with a token of its own, sees every
  // notification, and all of them before the call's result is read.
  const progress = [];
  const own = await connect();
  own.setNotificationHandler(ProgressNotificationSchema, (n) => {
    if (n.params.progressToken === "kept") progress.push(n.params);
  });
  const res = await own.callTool({
    name: "transform",
    arguments: { file: "calc.go", lines: "3-5", verify: "grep -q 'return a + b' calc.go", task: "make Add add", model },
    _meta: { progressToken: "kept" },
  });
  await own.close();
  assert.equal(res.isError ?? false, false, text(res));
  assert.equal(res.structuredContent.status, "OK");
  assert.equal(res.structuredContent.routing, "operator");
  assert.equal(res.structuredContent.details.outcome, "kept");
  assert.match(text(res), /^OK: transform: kept calc.go lines 3-5 \(\+1 -1\)/);
  assert.doesNotMatch(text(res), /\n/, "one line: the object is the structured content");
  assert.match(readFileSync(file, "utf8"), /return a \+ b/);
  const messages = progress.map((p) => p.message);
  assert.ok(messages.some((m) => m.startsWith("prefill")), messages.join("\n"));
  assert.ok(messages.some((m) => /^decode: \d+ tokens so far/.test(m)), messages.join("\n"));
  assert.ok(messages.some((m) => m.startsWith("verify running")), messages.join("\n"));
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress);
});

test("a transform red is restored byte for byte", async () => {
  writeFileSync(file, original);
  const res = await client.callTool({
    name: "transform",
    arguments: { file: "calc.go", verify: "echo still broken; exit 1", task: "make Add add", model, max_attempts: 1 },
  });
  assert.equal(res.isError, true);
  assert.equal(res.structuredContent.status, "RED");
  assert.equal(res.structuredContent.details.outcome, "restored");
  assert.match(text(res), /still exits 1 after 1 attempt\b/);
  assert.equal(readFileSync(file, "utf8"), original);
});

test("a cancelled transform is restored before the file is free again", async () => {
  writeFileSync(file, original);
  const abort = new AbortController();
  const call = client.callTool(
    { name: "transform", arguments: { file: "calc.go", verify: "sleep 60", task: "make Add add", model, no_baseline: true } },
    undefined,
    {
      signal: abort.signal,
      onprogress: (p) => {
        if (p.message.startsWith("verify running")) {
          // The edit is on disk now, and verify is running: cancel as a host's stop button does.
          assert.match(readFileSync(file, "utf8"), /return a \+ b/);
          abort.abort("the user pressed stop");
        }
      },
    },
  );
  await assert.rejects(call);
  // A second call on the same file waits for the first to end: once it returns, the cancelled
  // run's guards have run.
  const next = await client.callTool({ name: "summarize", arguments: { file: "calc.go", model } });
  assert.ok(next.structuredContent?.run_id, text(next));
  assert.equal(readFileSync(file, "utf8"), original);
});

test("a role with no earned routing is refused as a tool result", async () => {
  const res = await client.callTool({
    name: "transform",
    arguments: { file: "calc.go", verify: "true", task: "make Add add", role: "code" },
  });
  assert.equal(res.isError, true);
  assert.match(text(res), /^REFUSED: role "code" has no earned routing/);
  assert.equal(readFileSync(file, "utf8"), original);
});

test("runs_show reads back the journal of a run", async () => {
  const run = await client.callTool({
    name: "transform",
    arguments: { file: "calc.go", verify: "exit 1", task: "make Add add", model, max_attempts: 1 },
  });
  const res = await client.callTool({ name: "runs_show", arguments: { run_id: run.structuredContent.run_id } });
  assert.equal(res.isError ?? false, false, text(res));
  const events = res.structuredContent.events.map((e) => e.event);
  assert.equal(events[0], "run_start");
  assert.equal(events.at(-1), "run_end");
  assert.ok(events.includes("verify"));
});

test("an agent task runs to a committed branch, with progress notifications, and runs_show shows its diff", async () => {
  // A client of its own, as for the transform above, sees every notification.
  const progress = [];
  const own = await connect();
  own.setNotificationHandler(ProgressNotificationSchema, (n) => {
    if (n.params.progressToken === "agent") progress.push(n.params);
  });
  const sub = readFileSync(join(work, "sub.go"), "utf8");
  const res = await own.callTool({
    name: "agent",
    arguments: { task: "make Sub subtract", verify: "grep -q 'return a - b' sub.go", model },
    _meta: { progressToken: "agent" },
  });
  await own.close();
  assert.equal(res.isError ?? false, false, text(res));
  const out = res.structuredContent;
  assert.equal(out.status, "OK");
  assert.equal(out.mode, "agent");
  assert.equal(out.routing, "operator");
  assert.equal(out.details.status, "completed");
  assert.equal(out.details.turns, 3);
  assert.equal(out.details.branch, `locum/agent/${out.run_id}`);
  assert.deepEqual(out.details.files_changed, ["sub.go"]);
  assert.match(text(res), new RegExp(`^OK: agent: completed after 3 turns on branch locum/agent/${out.run_id}: 1 file changed`));

  // The work is a commit on the branch; the person's tree is as it was.
  assert.equal(git("rev-parse", out.details.branch).trim(), out.details.commit);
  assert.match(git("show", `${out.details.branch}:sub.go`), /return a - b/);
  assert.equal(readFileSync(join(work, "sub.go"), "utf8"), sub);
  assert.equal(git("status", "--porcelain", "--", "sub.go"), "");

  const messages = progress.map((p) => p.message);
  for (const want of ["turn 1 of 30: read_file sub.go", "turn 2 of 30: edit_file sub.go", "turn 3 of 30: finish",
    "verify running (round 1 of 3, after finish)"]) {
    assert.ok(messages.includes(want), `${want}\n${messages.join("\n")}`);
  }
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress);

  const show = await client.callTool({ name: "runs_show", arguments: { run_id: out.run_id } });
  assert.equal(show.isError ?? false, false, text(show));
  assert.equal(show.structuredContent.diff.branch, out.details.branch);
  assert.match(show.structuredContent.diff.text, /-\treturn a \+ b\n\+\treturn a - b\n/);
  assert.match(text(show), /diff of branch locum\/agent\/\S+ from where it started, \d+ bytes:\ndiff --git a\/sub.go b\/sub.go/);
});

test("an agent call for a role with no earned routing is refused as a tool result, with no branch", async () => {
  const before = git("branch", "--list", "locum/agent/*");
  const res = await client.callTool({
    name: "agent",
    arguments: { task: "make Sub subtract", verify: "true", role: "agent" },
  });
  assert.equal(res.isError, true);
  assert.match(text(res), /^REFUSED: role "agent" has no earned routing/);
  assert.equal(res.structuredContent.status, "REFUSED");
  assert.equal(res.structuredContent.mode, "agent");
  assert.equal(res.structuredContent.error.kind, "refused");
  assert.equal(res.structuredContent.error.command, "locum roles accept agent MODEL");
  assert.equal(git("branch", "--list", "locum/agent/*"), before);
});
