// The first delegation over MCP on a real model, as a host plays it through the official
// TypeScript client: realmodel/mcp_test.go runs `locum init` and then this file, which holds the
// host's calls, with LOCUM_BIN, LOCUM_WORK, LOCUM_TASK (the task as JSON) and a step in
// LOCUM_STEP: "refused" before the person accepted the role, "kept" after.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const task = JSON.parse(process.env.LOCUM_TASK);
const step = process.env.LOCUM_STEP;
const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

// connect starts the server as the .mcp.json `locum init` wrote says: plain `locum mcp`.
const connect = async () => {
  const transport = new StdioClientTransport({
    command: process.env.LOCUM_BIN,
    args: ["mcp"],
    cwd: process.env.LOCUM_WORK,
    env: { ...process.env },
    stderr: "inherit",
  });
  const c = new Client({ name: "locum-realmodel-road", version: "1.0.0" });
  await c.connect(transport);
  return c;
};

const transform = (client) =>
  client.callTool(
    { name: "transform", arguments: { file: task.file, symbol: task.symbol, verify: task.verify, task: task.task, max_output_tokens: 512 } },
    undefined,
    { timeout: 10 * 60 * 1000 },
  );

test(`the host's first delegation: ${step}`, async () => {
  const client = await connect();
  try {
    const status = await client.callTool({ name: "status", arguments: {} });
    assert.equal(status.isError ?? false, false, text(status));
    assert.equal(status.structuredContent.up, true, "the real server answers");

    const res = await transform(client);
    const out = res.structuredContent;
    console.log(`${step}: ${JSON.stringify({ status: out.status, routing: out.routing, model: out.model, attempts: out.attempts, in_tokens: out.in_tokens, out_tokens: out.out_tokens, error: out.error })}`);
    if (step === "refused") {
      assert.equal(res.isError, true, "a role with no routing is refused");
      assert.equal(out.status, "REFUSED", text(res));
      assert.match(out.error.command, /^locum roles accept code MODEL/, "the refusal names the person's command");
    } else {
      assert.equal(out.routing, "operator", text(res));
      assert.equal(out.model, process.env.LOCUM_MODEL);
      assert.ok(["OK", "RED"].includes(out.status), `a verdict, not a failure to run: ${text(res)}`);
    }
  } finally {
    await client.close();
  }
});
