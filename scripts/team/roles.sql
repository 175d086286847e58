-- Least privilege for a team database (docs/team.md, "Least privilege"). Run once,
-- as the owner of pi-index's tables, after the first push created them:
--   psql "$PI_INDEX_DATABASE_URL" -f scripts/team/roles.sql
-- Then one login role per pushing machine, named as it pushes (--as), and
-- login roles for readers:
--   CREATE ROLE "alice@laptop" LOGIN PASSWORD '...' IN ROLE pi_pusher;
--   CREATE ROLE dashboard LOGIN PASSWORD '...' IN ROLE pi_reader;

CREATE ROLE pi_pusher NOLOGIN;
CREATE ROLE pi_reader NOLOGIN;

GRANT SELECT ON pi_index_schema, pi_pair_words TO pi_pusher, pi_reader;
GRANT USAGE ON SEQUENCE pi_sessions_sid_seq TO pi_pusher;
-- A pusher reads, adds and changes rows (every column but host, each one
-- granted alone: a table-level UPDATE or DELETE would let it LOCK a table
-- against every reader), and removes its sessions only through
-- pi_remove_sessions (the same block as src/team/schema.rs PUSHER_GRANTS).
DO $$
DECLARE t text;
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pi_pusher') THEN
        FOREACH t IN ARRAY ARRAY['pi_hosts', 'pi_sessions', 'pi_messages', 'pi_windows', 'pi_terms'] LOOP
            EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I FROM pi_pusher', t);
            EXECUTE format('GRANT SELECT, INSERT ON %I TO pi_pusher', t);
            EXECUTE (SELECT format('GRANT UPDATE (%s) ON %I TO pi_pusher',
                        string_agg(quote_ident(attname::text), ', '), t)
                     FROM pg_attribute
                     WHERE attrelid = t::regclass AND attnum > 0 AND NOT attisdropped
                       AND attname <> 'host');
        END LOOP;
        GRANT EXECUTE ON FUNCTION pi_remove_sessions(text, bigint[]) TO pi_pusher;
    END IF;
END
$$;

GRANT SELECT ON pi_hosts, pi_sessions, pi_messages, pi_windows, pi_terms TO pi_reader;

-- A pusher sees, writes and deletes only the rows of the host its role is
-- named after; a reader sees every row.
ALTER TABLE pi_hosts ENABLE ROW LEVEL SECURITY;
ALTER TABLE pi_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE pi_messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE pi_windows ENABLE ROW LEVEL SECURITY;
ALTER TABLE pi_terms ENABLE ROW LEVEL SECURITY;
CREATE POLICY pi_own_host ON pi_hosts TO pi_pusher
    USING (host = current_user) WITH CHECK (host = current_user);
CREATE POLICY pi_own_host ON pi_sessions TO pi_pusher
    USING (host = current_user) WITH CHECK (host = current_user);
CREATE POLICY pi_own_host ON pi_messages TO pi_pusher
    USING (host = current_user) WITH CHECK (host = current_user);
CREATE POLICY pi_own_host ON pi_windows TO pi_pusher
    USING (host = current_user) WITH CHECK (host = current_user);
CREATE POLICY pi_own_host ON pi_terms TO pi_pusher
    USING (host = current_user) WITH CHECK (host = current_user);
CREATE POLICY pi_read_all ON pi_hosts TO pi_reader USING (true);
CREATE POLICY pi_read_all ON pi_sessions TO pi_reader USING (true);
CREATE POLICY pi_read_all ON pi_messages TO pi_reader USING (true);
CREATE POLICY pi_read_all ON pi_windows TO pi_reader USING (true);
CREATE POLICY pi_read_all ON pi_terms TO pi_reader USING (true);
