-- Tool calls (db/toolcalls.go): a row per call a model made, written with
-- its tool_call event. The events are the record; this is the turn
-- runner's index of them: which calls wait for a person (decision NULL),
-- which have no result yet (state ''), which began to run (started), and
-- what to send the model again
-- when a turn resumes after a restart. A decision is a conditional
-- update of decision IS NULL, so that the first one wins on every node.
CREATE TABLE tool_calls (
    session      TEXT NOT NULL,
    call_id      TEXT NOT NULL,
    turn_id      TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    step         INTEGER NOT NULL,
    step_text    TEXT NOT NULL,
    tool         TEXT NOT NULL,
    arguments    TEXT NOT NULL,
    policy       TEXT NOT NULL,
    call_offset  BIGINT NOT NULL,
    requested_at TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    decision     TEXT,
    decided_by   TEXT NOT NULL,
    started      INTEGER NOT NULL,
    state        TEXT NOT NULL,
    output       TEXT NOT NULL,
    error        TEXT NOT NULL,
    PRIMARY KEY (session, call_id)
);

--bun:split

CREATE INDEX tool_calls_turn ON tool_calls (session, turn_id, seq);

--bun:split

CREATE INDEX tool_calls_pending ON tool_calls (session) WHERE decision IS NULL;

--bun:split

CREATE INDEX tool_calls_open ON tool_calls (session) WHERE state = '';

--bun:split

-- Tools a person allowed for the rest of a session (allow_session); a
-- fork takes its parent's.
CREATE TABLE session_tools (
    session TEXT NOT NULL,
    tool    TEXT NOT NULL,
    PRIMARY KEY (session, tool)
);
