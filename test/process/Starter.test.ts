import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { startDesk, tempDataDir } from "../support/Process.ts"

/** The shell blocks of a Markdown document, in order. */
const shellBlocks = (markdown: string) =>
  [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!.replace(/^ {3}/gm, ""))

describe("/starter.md", () => {
  it.scopedLive("followed literally on a fresh desk, ends with a body in hand", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      const desk = yield* startDesk({ env: { DESK_DATA_DIR: dataDir, DESK_PUBLIC_URL: "http://127.0.0.1:1" } })
      const starter = yield* Effect.promise(() => fetch(`${desk.url}/starter.md`).then((r) => r.text()))
      // Every block in one shell, as a reader pastes them one after another; DESK points at this desk, and each
      // answer ends its line.
      const prelude = ["set -e", "curl() { command curl \"$@\"; echo; }"]
      const script = [...prelude, ...shellBlocks(starter), "echo \"ID=$ID\""].join("\n")
        .replace(/^DESK=.*$/m, `DESK=${desk.url}`)
      const out = execFileSync("bash", ["-c", script], { encoding: "utf8", timeout: 30_000 })
      const answers = out.trim().split("\n")
      expect(answers.at(-1)).toMatch(/^ID=DESK-\d+$/)
      const id = answers.at(-1)!.slice(3)
      // status, search, preview, unlock, body: each a JSON answer, none an error.
      const json = answers.slice(0, -1).filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
      expect(json.map((_) => _.error ?? "answered")).toEqual([
        "answered",
        "answered",
        "answered",
        "answered",
        "answered"
      ])
      expect(json[1].items.map((_: { id: string }) => _.id)).toContain(id)
      expect(json[2]).toMatchObject({ id })
      expect(json[3]).toMatchObject({ ok: true, bodyUrl: `/api/handoffs/${id}/body` })
      expect(json[4]).toMatchObject({ ok: true, id, body: expect.stringContaining("#") })
    }), 180_000)
})
