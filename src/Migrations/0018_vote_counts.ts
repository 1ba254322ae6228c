import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A handoff's `useful` and `not_useful` follow its feedback rows by a trigger that adds each vote's change. A vote
 * recounted the handoff's votes instead (two counts over its feedback per vote), which on PostgreSQL lost votes:
 * an UPDATE that waited for the handoff's row behind another vote's still counted with the snapshot it began with,
 * without the vote that had just committed (24 buyers voting and changing their votes at once left the counts 7/17
 * beside votes of 6/18). An increment is re-applied to the row as the other vote left it; and the recount read
 * every vote of a popular handoff while holding the row its sales update.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE FUNCTION count_vote() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'UPDATE' AND OLD.handoff_seq = NEW.handoff_seq THEN
        UPDATE handoffs SET useful = useful + NEW.useful::int - OLD.useful::int,
          not_useful = not_useful + (NOT NEW.useful)::int - (NOT OLD.useful)::int
        WHERE seq = NEW.handoff_seq;
        RETURN NULL;
      END IF;
      IF TG_OP <> 'INSERT' THEN
        UPDATE handoffs SET useful = useful - OLD.useful::int, not_useful = not_useful - (NOT OLD.useful)::int
        WHERE seq = OLD.handoff_seq;
      END IF;
      IF TG_OP <> 'DELETE' THEN
        UPDATE handoffs SET useful = useful + NEW.useful::int, not_useful = not_useful + (NOT NEW.useful)::int
        WHERE seq = NEW.handoff_seq;
      END IF;
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER feedback_counted AFTER INSERT OR DELETE ON feedback
    FOR EACH ROW EXECUTE FUNCTION count_vote()`
  // A vote cast again unchanged (the desk's upsert names the column either way) moves nothing.
  yield* sql`CREATE TRIGGER feedback_recounted AFTER UPDATE OF useful, handoff_seq ON feedback FOR EACH ROW
    WHEN (OLD.useful IS DISTINCT FROM NEW.useful OR OLD.handoff_seq IS DISTINCT FROM NEW.handoff_seq)
    EXECUTE FUNCTION count_vote()`
  // Counts a lost vote left behind are mended once; from here on the trigger keeps them.
  yield* sql`UPDATE handoffs h SET
      useful = (SELECT count(*) FROM feedback f WHERE f.handoff_seq = h.seq AND f.useful),
      not_useful = (SELECT count(*) FROM feedback f WHERE f.handoff_seq = h.seq AND NOT f.useful)
    WHERE h.useful <> (SELECT count(*) FROM feedback f WHERE f.handoff_seq = h.seq AND f.useful)
       OR h.not_useful <> (SELECT count(*) FROM feedback f WHERE f.handoff_seq = h.seq AND NOT f.useful)`
})
