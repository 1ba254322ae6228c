/**
 * Where a connection stands in its transaction, as far as its statement timeout goes: whether a transaction is
 * open, whether `SET LOCAL statement_timeout = 0` lifted the timeout in it, and the savepoints that would undo a
 * lift made after them. Followed from the text of each statement sent, one statement per text, in the order sent
 * (PostgreSQL answers a connection's statements in that order). A text this does not recognize changes nothing;
 * a session-wide `SET statement_timeout` is not followed.
 */
export interface TransactionScope {
  readonly open: boolean
  readonly lifted: boolean
  readonly savepoints: ReadonlyArray<{ readonly name: string; readonly lifted: boolean }>
}

export const OUTSIDE: TransactionScope = { open: false, lifted: false, savepoints: [] }

const NAME = String.raw`("?)([^\s";]+)\1`
const END = String.raw`\s*;?\s*$`
const BEGINS = /^\s*(?:BEGIN|START\s+TRANSACTION)\b/i
const ENDS = new RegExp(
  String.raw`^\s*(?:COMMIT|END|ABORT|ROLLBACK)(?:\s+(?:WORK|TRANSACTION))?(\s+AND\s+(NO\s+)?CHAIN)?${END}`,
  "i"
)
const SAVEPOINT = new RegExp(String.raw`^\s*SAVEPOINT\s+${NAME}${END}`, "i")
const ROLLBACK_TO = new RegExp(
  String.raw`^\s*ROLLBACK(?:\s+(?:WORK|TRANSACTION))?\s+TO\s+(?:SAVEPOINT\s+)?${NAME}${END}`,
  "i"
)
const RELEASE = new RegExp(String.raw`^\s*RELEASE\s+(?:SAVEPOINT\s+)?${NAME}${END}`, "i")
const LIFTS = new RegExp(String.raw`^\s*SET\s+LOCAL\s+statement_timeout\s*(?:=|\s+TO\s+)\s*(?:0|'0')${END}`, "i")

/** An unquoted name is folded to lower case, as PostgreSQL folds it. */
const nameOf = (match: RegExpExecArray) => (match[1] === "\"" ? match[2]! : match[2]!.toLowerCase())

/** The last savepoint of that name, as PostgreSQL finds it. */
const lastNamed = (scope: TransactionScope, name: string) => scope.savepoints.map((_) => _.name).lastIndexOf(name)

/** The scope after `text` ran (or was at least sent: one that fails leaves a transaction that must end anyway). */
export const afterStatement = (scope: TransactionScope, text: string): TransactionScope => {
  const ended = ENDS.exec(text)
  // COMMIT AND CHAIN opens the next transaction at once; a lift, local to the one that ended, is gone.
  if (ended !== null) return { ...OUTSIDE, open: ended[1] !== undefined && ended[2] === undefined }
  if (!scope.open) return BEGINS.test(text) ? { ...OUTSIDE, open: true } : scope
  if (LIFTS.test(text)) return { ...scope, lifted: true }
  const savepoint = SAVEPOINT.exec(text)
  if (savepoint !== null) {
    return { ...scope, savepoints: [...scope.savepoints, { name: nameOf(savepoint), lifted: scope.lifted }] }
  }
  const rollback = ROLLBACK_TO.exec(text)
  if (rollback !== null) {
    // Rolled back to, a savepoint stays; what was set after it is undone, a lift included.
    const at = lastNamed(scope, nameOf(rollback))
    return at < 0
      ? scope
      : { ...scope, lifted: scope.savepoints[at]!.lifted, savepoints: scope.savepoints.slice(0, at + 1) }
  }
  const release = RELEASE.exec(text)
  if (release !== null) {
    const at = lastNamed(scope, nameOf(release))
    return at < 0 ? scope : { ...scope, savepoints: scope.savepoints.slice(0, at) }
  }
  return scope
}
