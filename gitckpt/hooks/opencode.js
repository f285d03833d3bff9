// gitckpt's OpenCode plugin, written by `gitckpt hook install --host opencode` (remove it with
// `gitckpt hook uninstall --host opencode`). It runs `gitckpt hook KIND --host opencode` at five
// moments (https://opencode.ai/docs/plugins): a session's first request gets the active task's
// handoff in its system prompt; the user's message is kept for the drifts and the step that
// follow; every tool that changes files is recorded as a drift named after it; a compaction keeps the reminder of unsaved work in its summary; an idle session
// with unsaved work is sent one reminder. Any failure of gitckpt is silent: the session goes on.
import { spawn } from "node:child_process"

const ARGS = [] // "--cli" where OpenCode has no gitckpt MCP server: texts name CLI commands
const WAIT_MS = 30000

function gitckpt(kind, payload) {
  return new Promise((resolve) => {
    let out = ""
    let child
    try {
      child = spawn("gitckpt", ["hook", kind, "--host", "opencode", ...ARGS], {
        cwd: payload.cwd,
        stdio: ["pipe", "pipe", "inherit"],
      })
    } catch {
      return resolve("")
    }
    const timer = setTimeout(() => child.kill(), WAIT_MS)
    child.on("error", () => resolve(""))
    child.stdout.on("data", (chunk) => (out += chunk))
    child.on("close", () => {
      clearTimeout(timer)
      resolve(out.trim())
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(payload))
  })
}

export const Gitckpt = async ({ client, directory, worktree }) => {
  const cwd = directory || worktree
  const handoffs = new Map() // session id -> its handoff, given at its first request
  return {
    "experimental.chat.system.transform": async (input, output) => {
      const id = input.sessionID
      if (!id) return
      if (!handoffs.has(id)) {
        handoffs.set(id, "") // one start per session, even while the first is running
        handoffs.set(id, await gitckpt("session-start", { cwd, session_id: id, source: "startup" }))
      }
      const text = handoffs.get(id)
      if (text) output.system.push(text)
    },
    "chat.message": async (input, output) => {
      const text = (output.parts || [])
        .filter((p) => p.type === "text" && !p.synthetic)
        .map((p) => p.text)
        .join("\n")
      if (text) await gitckpt("prompt", { cwd, session_id: input.sessionID, prompt: text })
    },
    "tool.execute.after": async (input) => {
      await gitckpt("post-tool", {
        cwd,
        session_id: input.sessionID,
        tool_name: input.tool,
        tool_input: input.args || {},
      })
    },
    "experimental.session.compacting": async (input, output) => {
      const line = await gitckpt("pre-compact", { cwd, session_id: input.sessionID })
      if (line) output.context.push(line)
    },
    event: async ({ event }) => {
      if (event.type !== "session.idle") return
      const id = event.properties && event.properties.sessionID
      const line = await gitckpt("stop", { cwd, session_id: id })
      if (line && id) {
        await client.session.prompt({ path: { id }, body: { parts: [{ type: "text", text: line }] } })
      }
    },
  }
}
